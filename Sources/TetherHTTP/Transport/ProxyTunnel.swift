/// Opening a `CONNECT` tunnel through an HTTP proxy over a connected stream: the request is
/// written as the stream takes it, and the proxy's answer head is read; a 2xx opens
/// the tunnel, anything else is a reason the connection fails with.
///
/// ```swift
/// var tunnel = ProxyTunnel(request: route.tunnelRequest!)
/// // On readiness:
/// switch tunnel.step(stream, readable: readable, writable: writable, buffer: buffer) {
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

  /// Writes what the stream takes when `writable`, reads the answer when `readable`.
  mutating func step(
    _ stream: any ByteStream, readable: Bool, writable: Bool,
    buffer: UnsafeMutableRawBufferPointer
  ) -> Outcome {
    if writable {
      while written < request.count {
        let result = request.withUnsafeBytes {
          stream.write(UnsafeRawBufferPointer(rebasing: $0[written...]))
        }
        guard case .wrote(let count) = result else {
          if case .failed = result { return .failed("the proxy closed the connection") }
          break
        }
        written += count
      }
    }
    guard readable else { return .pending }
    let count: Int
    switch stream.read(into: buffer) {
    case .bytes(let read): count = read
    case .wantRead, .wantWrite: return .pending
    case .closed, .failed: return .failed("the proxy closed the connection during CONNECT")
    }
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
