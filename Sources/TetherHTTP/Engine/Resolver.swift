import Foundation
import Streams
import Tether
import TetherSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One address a name resolved to, as the socket calls take it.
struct SocketAddress: Sendable {
  let family: Int32
  let bytes: [UInt8]

  func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    bytes.withUnsafeBytes {
      body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
    }
  }
}

/// Name resolution off every shared pool: `getaddrinfo` blocks (for as long as a DNS server
/// takes), so it runs on one thread of its own, never on an ``EventLoop`` nor on Swift's
/// cooperative pool. Numeric addresses (`127.0.0.1`, `::1`) never reach that thread.
final class Resolver: Sendable {
  static let shared = Resolver()

  private struct Job {
    let host: String
    let port: Int
    let completion: @Sendable (Result<[SocketAddress], HTTPError>) -> Void
  }

  private let jobs = Lock<[Job]>([])
  private let signal = DispatchSemaphore(value: 0)
  private let started = Lock(false)

  /// Resolves `host` (an IP literal, `[v6]` or a name) and calls `completion` with its
  /// addresses: at once for a literal, from the resolver's thread otherwise.
  func resolve(
    _ host: String, port: Int,
    completion: @escaping @Sendable (Result<[SocketAddress], HTTPError>) -> Void
  ) {
    let name =
      host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    // A numeric host is converted without any lookup (`AI_NUMERICHOST`), so it never blocks.
    if case .success(let addresses) = Self.lookUp(name, port: port, numericOnly: true) {
      completion(.success(addresses))
      return
    }
    let mustStart = started.withLock { started -> Bool in
      defer { started = true }
      return !started
    }
    if mustStart {
      let thread = Thread { [self] in run() }
      thread.name = "Tether resolver"
      thread.stackSize = 256 << 10
      thread.start()
    }
    jobs.withLock { $0.append(Job(host: name, port: port, completion: completion)) }
    signal.signal()
  }

  private func run() {
    KernelThreadName.set("Tether resolver")
    while true {
      // A semaphore on a thread of our own: this thread exists to wait.
      signal.wait()
      guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
      job.completion(Self.lookUp(job.host, port: job.port))
    }
  }

  /// `host`'s addresses; with `numericOnly`, only an IPv4 or IPv6 literal converts (no DNS).
  private static func lookUp(
    _ host: String, port: Int, numericOnly: Bool = false
  ) -> Result<[SocketAddress], HTTPError> {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = socketStreamType
    hints.ai_flags = numericOnly ? AI_NUMERICHOST | AI_NUMERICSERV : 0
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &list) == 0, let list else {
      return .failure(.unreachable(url: host, reason: "host not found"))
    }
    defer { freeaddrinfo(list) }
    var addresses: [SocketAddress] = []
    var entry: UnsafeMutablePointer<addrinfo>? = list
    while let address = entry {
      entry = address.pointee.ai_next
      guard let pointer = address.pointee.ai_addr else { continue }
      let bytes = Array(
        UnsafeRawBufferPointer(start: pointer, count: Int(address.pointee.ai_addrlen)))
      addresses.append(SocketAddress(family: address.pointee.ai_family, bytes: bytes))
    }
    guard !addresses.isEmpty else {
      return .failure(.unreachable(url: host, reason: "host not found"))
    }
    return .success(addresses)
  }
}

// Glibc imports SOCK_STREAM as an enum case; Musl and Darwin as an Int32 macro.
#if canImport(Glibc)
let socketStreamType = Int32(SOCK_STREAM.rawValue)
#else
let socketStreamType = SOCK_STREAM
#endif
#if canImport(Glibc) || canImport(Musl)
let sendNoSignal = Int32(MSG_NOSIGNAL)
#else
let sendNoSignal: Int32 = 0
#endif
