import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One address a name resolved to, as the socket calls take it.
struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
  let family: Int32
  let bytes: [UInt8]

  /// Whether it is an IPv6 address (Happy Eyeballs alternates the two families).
  var isIPv6: Bool { family == AF_INET6 }

  func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    bytes.withUnsafeBytes {
      body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
    }
  }

  /// The address as `ip:port` or `[ip]:port`, for logs and tests.
  var description: String {
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    func ip() -> String {
      String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    return bytes.withUnsafeBytes { raw -> String in
      if isIPv6 {
        let address = raw.loadUnaligned(as: sockaddr_in6.self)
        var binary = address.sin6_addr
        inet_ntop(AF_INET6, &binary, &text, socklen_t(text.count))
        return "[\(ip())]:\(UInt16(bigEndian: address.sin6_port))"
      }
      let address = raw.loadUnaligned(as: sockaddr_in.self)
      var binary = address.sin_addr
      inet_ntop(AF_INET, &binary, &text, socklen_t(text.count))
      return "\(ip()):\(UInt16(bigEndian: address.sin_port))"
    }
  }

  /// The address of an IPv4 or IPv6 literal, without any lookup; `nil` for a name.
  static func numeric(_ host: String, port: Int) -> [SocketAddress]? {
    lookUp(host, port: port, numericOnly: true)
  }

  /// `host`'s addresses from `getaddrinfo` (`nil` when it fails); with `numericOnly`, only an
  /// IPv4 or IPv6 literal converts (no DNS).
  static func lookUp(_ host: String, port: Int, numericOnly: Bool) -> [SocketAddress]? {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = socketStreamType
    hints.ai_flags = numericOnly ? AI_NUMERICHOST | AI_NUMERICSERV : 0
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &list) == 0, let list else { return nil }
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
    return addresses.isEmpty ? nil : addresses
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
