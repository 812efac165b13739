#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One readiness report: which registration, and what it may do without blocking.
struct PollerEvent {
  var token: UInt64
  /// Readable, or the peer hung up or the socket failed (the read that follows says which).
  var readable: Bool
  /// Writable, or the socket failed (the write that follows says which).
  var writable: Bool
}

/// Readiness notification for one ``EventLoop``: epoll on Linux (found with `dlsym`, because
/// the toolchain's Glibc module does not export `sys/epoll.h`), `poll(2)` where epoll is
/// missing (Musl's static builds, Apple platforms). This is the only platform difference of
/// the engine.
///
/// Level-triggered. A descriptor with no interest is removed from the kernel's set, so a
/// paused stream whose peer hung up cannot spin the loop.
///
/// Confined to its loop's thread.
final class Poller {
  private let epoll: EpollFunctions?
  private let epollDescriptor: Int32
  /// Interest by descriptor, for the `poll(2)` backend (and to know what epoll holds).
  private var interest: [Int32: (token: UInt64, read: Bool, write: Bool)] = [:]
  private var epollBuffer: UnsafeMutableRawPointer
  private let capacity = 256

  init() throws(EngineFailure) {
    epoll = EpollFunctions.shared
    if let epoll {
      epollDescriptor = epoll.create(Int32(O_CLOEXEC))
      guard epollDescriptor >= 0 else { throw EngineFailure("epoll_create1 failed: \(errno)") }
    } else {
      epollDescriptor = -1
    }
    epollBuffer = UnsafeMutableRawPointer.allocate(
      byteCount: capacity * EpollFunctions.eventSize, alignment: 8)
  }

  deinit {
    epollBuffer.deallocate()
    if epollDescriptor >= 0 { close(epollDescriptor) }
  }

  /// Whether ``set(_:token:read:write:edgeTriggered:)`` can watch a descriptor
  /// edge-triggered (epoll can, `poll(2)` cannot).
  var canTriggerOnEdges: Bool { epoll != nil }

  /// Sets what `descriptor` waits for; with neither, it waits for nothing. `edgeTriggered`
  /// (only where ``canTriggerOnEdges``): reported once per change of its state, not for as
  /// long as it stays ready.
  func set(
    _ descriptor: Int32, token: UInt64, read: Bool, write: Bool, edgeTriggered: Bool = false
  ) {
    let previous = interest[descriptor]
    if !read && !write {
      interest[descriptor] = nil
      if let epoll, previous != nil {
        _ = epoll.control(epollDescriptor, EpollFunctions.delete, descriptor, nil)
      }
      return
    }
    if let previous, previous.token == token, previous.read == read, previous.write == write {
      return
    }
    interest[descriptor] = (token, read, write)
    guard let epoll else { return }
    var event = [UInt8](repeating: 0, count: EpollFunctions.eventSize)
    let mask: UInt32 =
      (read ? EpollFunctions.input : 0) | (write ? EpollFunctions.output : 0)
      | (edgeTriggered ? EpollFunctions.edgeTriggered : 0)
    event.withUnsafeMutableBytes { raw in
      raw.storeBytes(of: mask, toByteOffset: 0, as: UInt32.self)
      raw.storeBytes(of: token, toByteOffset: EpollFunctions.dataOffset, as: UInt64.self)
      let operation = previous == nil ? EpollFunctions.add : EpollFunctions.modify
      _ = epoll.control(epollDescriptor, operation, descriptor, raw.baseAddress)
    }
  }

  /// Forgets `descriptor` (call before closing it).
  func remove(_ descriptor: Int32) {
    set(descriptor, token: 0, read: false, write: false)
  }

  /// Waits up to `timeout` milliseconds (-1: forever) and appends what is ready to `events`.
  func wait(timeout: Int32, into events: inout [PollerEvent]) {
    if let epoll {
      let count = epoll.wait(epollDescriptor, epollBuffer, Int32(capacity), timeout)
      guard count > 0 else { return }
      for index in 0..<Int(count) {
        let base = epollBuffer + index * EpollFunctions.eventSize
        let mask = base.loadUnaligned(as: UInt32.self)
        let token = base.loadUnaligned(fromByteOffset: EpollFunctions.dataOffset, as: UInt64.self)
        let failed = mask & (EpollFunctions.error | EpollFunctions.hangup) != 0
        events.append(
          PollerEvent(
            token: token, readable: failed || mask & EpollFunctions.input != 0,
            writable: failed || mask & EpollFunctions.output != 0))
      }
      return
    }
    var entries: [pollfd] = []
    var tokens: [UInt64] = []
    entries.reserveCapacity(interest.count)
    for (descriptor, wanted) in interest {
      let mask = (wanted.read ? Int16(POLLIN) : 0) | (wanted.write ? Int16(POLLOUT) : 0)
      entries.append(pollfd(fd: descriptor, events: mask, revents: 0))
      tokens.append(wanted.token)
    }
    let count = entries.withUnsafeMutableBufferPointer {
      poll($0.baseAddress, nfds_t($0.count), timeout)
    }
    guard count > 0 else { return }
    for (index, entry) in entries.enumerated() where entry.revents != 0 {
      let failed = entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
      events.append(
        PollerEvent(
          token: tokens[index], readable: failed || entry.revents & Int16(POLLIN) != 0,
          writable: failed || entry.revents & Int16(POLLOUT) != 0))
    }
  }
}

/// epoll's three calls, looked up once in the running process; `nil` where there is no epoll.
private struct EpollFunctions: @unchecked Sendable {
  // @unchecked Sendable: three C function pointers, immutable.
  typealias Create = @convention(c) (Int32) -> Int32
  typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
  typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32

  let create: Create
  let control: Control
  let wait: Wait

  static let input: UInt32 = 0x001
  static let output: UInt32 = 0x004
  static let error: UInt32 = 0x008
  static let hangup: UInt32 = 0x010
  static let edgeTriggered: UInt32 = 1 << 31
  static let add: Int32 = 1
  static let delete: Int32 = 2
  static let modify: Int32 = 3
  // `struct epoll_event` is packed on x86-64 (12 bytes), naturally aligned elsewhere.
  #if arch(x86_64)
  static let eventSize = 12
  static let dataOffset = 4
  #else
  static let eventSize = 16
  static let dataOffset = 8
  #endif

  static let shared: EpollFunctions? = {
    #if os(Linux)
    guard let process = DynamicLibrary.process,
      let create = process.function("epoll_create1", as: Create.self),
      let control = process.function("epoll_ctl", as: Control.self),
      let wait = process.function("epoll_wait", as: Wait.self)
    else { return nil }
    return EpollFunctions(create: create, control: control, wait: wait)
    #else
    return nil
    #endif
  }()
}

/// A failure of the engine's own machinery (not of a request): no descriptors left, a thread
/// that could not start.
struct EngineFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Names the calling thread for the kernel (what `top`, `perf` and `/proc/self/task/*/comm`
/// show; at most 15 bytes), through `pthread_setname_np` found with ``DynamicLibrary`` (the toolchain's
/// Glibc module does not export it). Does nothing where it is missing.
enum KernelThreadName {
  private typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32

  private static let setName: SetName? = {
    #if os(Linux)
    DynamicLibrary.process?.function("pthread_setname_np", as: SetName.self)
    #else
    return nil
    #endif
  }()

  static func set(_ name: String) {
    guard let setName else { return }
    let short = String(decoding: name.utf8.prefix(15), as: UTF8.self)
    _ = short.withCString { setName(pthread_self(), $0) }
  }
}
