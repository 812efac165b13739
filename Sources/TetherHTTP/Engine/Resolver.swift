import Foundation
import Streams
import Tether

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
    if let literal = Self.literal(name, port: port) {
      completion(.success([literal]))
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

  private static func lookUp(_ host: String, port: Int) -> Result<[SocketAddress], HTTPError> {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = socketStreamType
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

  /// `host` as an address when it is an IPv4 or IPv6 literal.
  static func literal(_ host: String, port: Int) -> SocketAddress? {
    var v4 = sockaddr_in()
    if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
      v4.sin_family = sa_family_t(AF_INET)
      v4.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
      #if canImport(Darwin)
      v4.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
      #endif
      return SocketAddress(family: AF_INET, bytes: withUnsafeBytes(of: v4) { Array($0) })
    }
    var v6 = sockaddr_in6()
    if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
      v6.sin6_family = sa_family_t(AF_INET6)
      v6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
      #if canImport(Darwin)
      v6.sin6_len = UInt8(MemoryLayout<sockaddr_in6>.size)
      #endif
      return SocketAddress(family: AF_INET6, bytes: withUnsafeBytes(of: v6) { Array($0) })
    }
    return nil
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
