#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening a `CONNECT` tunnel through an HTTP proxy on a connected, non-blocking socket: the
/// request is written as the socket takes it, and the proxy's answer head is read; a 2xx opens
/// the tunnel, anything else is a reason the connection fails with.
///
/// ```swift
/// var tunnel = ProxyTunnel(request: route.tunnelRequest!)
/// // On readiness:
/// switch tunnel.step(descriptor, readable: readable, writable: writable, buffer: buffer) {
/// case .pending: setInterest(read: true, write: tunnel.wantsToWrite)
/// case .open: // start TLS with the origin
/// case .failed(let reason): fail(reason)
/// }
/// ```
///
/// The proxy sends nothing after its answer until the client speaks (TLS starts with the
/// client's hello), so reading whole buffers never takes a byte of the tunnel. A value type,
/// owned by one connection on its loop.
struct ProxyTunnel {
  /// Where the tunnel stands after a step.
  enum Outcome: Equatable {
    /// Still writing the request or waiting for the answer.
    case pending
    /// The proxy answered 2xx: the socket now reaches the origin.
    case open
    /// The proxy refused or closed; the reason says which, for an error.
    case failed(String)
  }

  private let request: [UInt8]
  private var written = 0
  private var parser = HTTP1ResponseParser(isHeadRequest: true)

  /// A tunnel that sends `request` (the whole `CONNECT` head).
  init(request: [UInt8]) {
    self.request = request
  }

  /// Whether part of the request is still to be written.
  var wantsToWrite: Bool { written < request.count }

  /// Writes what the socket takes when `writable`, reads the answer when `readable`.
  mutating func step(
    _ descriptor: Int32, readable: Bool, writable: Bool, buffer: UnsafeMutableRawBufferPointer
  ) -> Outcome {
    if writable {
      while written < request.count {
        let count = request.withUnsafeBytes {
          send(descriptor, $0.baseAddress! + written, request.count - written, sendNoSignal)
        }
        if count > 0 {
          written += count
        } else if count < 0, errno == EINTR {
          continue
        } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
          break
        } else {
          return .failed("the proxy closed the connection")
        }
      }
    }
    guard readable else { return .pending }
    let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
    if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .pending }
    guard count > 0 else { return .failed("the proxy closed the connection during CONNECT") }
    let events: [HTTP1ResponseParser.Event]
    do throws(HTTP1ResponseParser.Failure) {
      events = try parser.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    } catch {
      return .failed("the proxy's answer to CONNECT: \(error.reason)")
    }
    for case .head(let status, _) in events {
      guard (200..<300).contains(status) else {
        return .failed(
          status == 407
            ? "the proxy requires authentication (407)"
            : "the proxy refused the tunnel (status \(status))")
      }
      guard !parser.hasTrailingBytes else {
        // RFC 9110 §9.3.6: a 2xx answer to CONNECT has no content. Bytes after its head
        // would be read as the origin's, so the tunnel is not used.
        return .failed(
          "the proxy accepted the tunnel (status \(status)) but sent bytes after its answer, "
            + "before the origin could speak; the tunnel was not used")
      }
      return .open
    }
    return .pending
  }
}
