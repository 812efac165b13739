import Dispatch
import Foundation
import Tether

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain `http://` over POSIX sockets, HTTP/1.1 with kept-alive connections: the transport of
/// clients that must never be taken down by a server (the etcd gateway, see `HTTPClient`'s
/// `plainHTTPOverSockets`).
///
/// Why it exists: on Linux, URLSession (swift-corelibs-foundation) traps — ends the process —
/// when a response carries HTTP trailers or a connection closes before any answer ("Transfer
/// completed, but there's no response", swift-corelibs-foundation#5285). The etcd gateway
/// sends its error answers with trailers, and a cluster member that dies mid-request closes
/// its connections. Here both are ordinary outcomes: the trailers are read and dropped
/// (``HTTP1ResponseParser``), and a connection that ends early is an ``HTTPError``.
///
/// What it does not do, by design: TLS (`https` stays with URLSession), redirects (a `3xx` is
/// returned as it is), compression (none is asked for; a body the server compresses anyway is
/// handed back as sent), proxies. The same limits as the URLSession transport hold otherwise:
/// one deadline per transfer, a size limit on buffered bodies, chunk-by-chunk streams.
///
/// Each transfer runs blocking I/O (with `poll` for deadlines) on a thread of its own: a
/// buffered one on a Dispatch worker (it ends by its deadline), a stream on a dedicated
/// thread (it may last for hours). Cancelling shuts the socket down, which wakes the thread.
final class SocketTransport: Sendable {
  /// Idle connections by `host:port`, newest last.
  private let idle = Lock<[String: [Int32]]>([:])
  /// The most idle connections kept per server.
  private let maximumIdlePerServer = 8

  deinit {
    for descriptors in idle.withLock({ $0.values }) {
      for descriptor in descriptors { close(descriptor) }
    }
  }

  /// Closes every idle connection.
  func invalidate() {
    let all = idle.withLock { idle -> [Int32] in
      defer { idle = [:] }
      return idle.values.flatMap { $0 }
    }
    for descriptor in all { close(descriptor) }
  }

  // MARK: - Buffered transfers

  /// Performs `request` and returns the whole response, whatever its status (see
  /// `HTTPTransport.perform`).
  func perform(_ request: URLRequest, limit: Int, timeout: Double) async throws -> RawHTTPResponse {
    let url = request.url!
    let control = TransferControl()
    let deadline = ContinuousClock.now + .clamped(seconds: timeout)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<RawHTTPResponse, any Error>) in
        DispatchQueue.global().async {
          var status = 0
          var headers: [String: String] = [:]
          var body = Data()
          let outcome = self.run(
            request, control: control, deadline: deadline, timeout: timeout
          ) { event throws(HTTPError) in
            switch event {
            case .head(let code, let fields):
              status = code
              headers = fields
              try Self.checkCoding(fields, of: request)
              if let length = fields["content-length"].flatMap(Int.init), length > limit {
                throw .tooLarge(url: HTTPError.redacted(url), limit: limit)
              }
            case .body(let piece):
              guard body.count + piece.count <= limit else {
                throw .tooLarge(url: HTTPError.redacted(url), limit: limit)
              }
              body.append(piece)
            case .end:
              break
            }
          }
          switch outcome {
          case .success:
            continuation.resume(
              returning: RawHTTPResponse(status: status, headers: headers, body: body))
          case .failure(.cancelled):
            continuation.resume(throwing: CancellationError())
          case .failure(let error):
            continuation.resume(throwing: error)
          }
        }
      }
    } onCancel: {
      control.cancel()
    }
  }

  // MARK: - Streaming transfers

  /// Starts `request` as a stream (see `HTTPTransport.stream`).
  ///
  /// - Returns: A closure that cancels the transfer; `handler` then gets no further events.
  func stream(
    _ request: URLRequest, limit: Int,
    handler: @escaping @Sendable (HTTPTransport.StreamEvent) -> Void
  ) -> @Sendable () -> Void {
    let control = TransferControl()
    let thread = Thread { [self] in
      let outcome = run(request, control: control, deadline: nil, timeout: nil) {
        event throws(HTTPError) in
        guard !control.isCancelled else { throw .cancelled }
        switch event {
        case .head(let status, let headers):
          try Self.checkCoding(headers, of: request)
          handler(.head(status: status, headers: headers))
        case .body(let piece): if !piece.isEmpty { handler(.chunk(piece)) }
        case .end: break
        }
      }
      guard !control.isCancelled else { return }
      switch outcome {
      case .success: handler(.end(nil))
      case .failure(let error): handler(.end(error))
      }
    }
    thread.name = "Tether HTTP stream"
    thread.start()
    return { control.cancel() }
  }

  /// Refuses a body compressed although only `identity` was accepted (the transport asks for
  /// it unless the caller set `Accept-Encoding` and so decodes bodies itself): nothing is ever
  /// inflated here, and such a body is not what the caller can read.
  private static func checkCoding(
    _ headers: [String: String], of request: URLRequest
  ) throws(HTTPError) {
    // The response's header first: looking a header up in a `URLRequest` is the dearer test.
    guard let coding = headers["content-encoding"]?.lowercased(), !coding.isEmpty,
      coding != "identity", request.value(forHTTPHeaderField: "Accept-Encoding") == nil
    else { return }
    throw .undecodable(
      url: HTTPError.redacted(request.url!), path: "",
      reason: "the server sent a \(coding)-encoded body although only identity was accepted")
  }

  // MARK: - One exchange

  /// Sends `request` and reads its response, handing each parser event to `receive` (which
  /// may end the transfer by throwing). Runs on the calling thread, blocking.
  private func run(
    _ request: URLRequest, control: TransferControl, deadline: ContinuousClock.Instant?,
    timeout: Double?, receive: (HTTP1ResponseParser.Event) throws(HTTPError) -> Void
  ) -> Result<Void, HTTPError> {
    let url = request.url!
    let redacted = HTTPError.redacted(url)
    guard let host = url.host, !host.isEmpty else {
      return .failure(.invalidRequest("\(redacted) has no host"))
    }
    let port = url.port ?? 80
    let server = "\(host):\(port)"
    let message: [UInt8]
    switch Self.serialize(request, host: host, port: port) {
    case .success(let bytes): message = bytes
    case .failure(let error): return .failure(error)
    }
    let timedOut = HTTPError.timedOut(url: redacted, after: timeout ?? 0)

    // A kept-alive connection first. When nothing at all comes back on it, the server most
    // likely closed it while idle: an idempotent request is sent again on a fresh connection;
    // any other is an error (RFC 9110 §9.2.2: it may have been processed), which callers such
    // as the etcd keys resolve themselves.
    let idempotent = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"].contains(
      request.httpMethod ?? "GET")
    var reused = takeIdle(server)
    while true {
      let descriptor: Int32
      if let reused {
        descriptor = reused
      } else {
        switch Self.connect(host: host, port: port, deadline: deadline, control: control) {
        case .success(let connected): descriptor = connected
        case .failure(.timedOut): return .failure(timedOut)
        case .failure(.cancelled): return .failure(.cancelled)
        case .failure(.failed(let reason)):
          return .failure(.unreachable(url: redacted, reason: reason))
        }
      }
      guard control.attach(descriptor) else {
        close(descriptor)
        return .failure(.cancelled)
      }
      var parser = HTTP1ResponseParser(isHeadRequest: request.httpMethod == "HEAD")
      let exchange = Self.exchange(
        descriptor, message: message, parser: &parser, deadline: deadline, receive: receive)
      control.detach()
      switch exchange {
      case .success:
        if parser.keepAlive && !control.isCancelled {
          putIdle(descriptor, server)
        } else {
          close(descriptor)
        }
        return .success(())
      case .failure(let failure):
        close(descriptor)
        if control.isCancelled { return .failure(.cancelled) }
        switch failure {
        case .nothingReceived where reused != nil && idempotent:
          reused = nil
          continue
        case .nothingReceived:
          return .failure(.truncated(url: redacted, expected: nil, received: 0))
        case .timedOut:
          return .failure(timedOut)
        case .connectionEnded:
          return .failure(
            .truncated(url: redacted, expected: parser.expectedLength, received: parser.received))
        case .malformed(let reason):
          return .failure(.unreachable(url: redacted, reason: "not an HTTP response: \(reason)"))
        case .receiver(let error):
          return .failure(error)
        }
      }
    }
  }

  private enum ExchangeFailure: Error {
    /// Not one byte of a response arrived before the connection ended.
    case nothingReceived
    case timedOut
    /// The connection ended inside the response.
    case connectionEnded
    case malformed(String)
    case receiver(HTTPError)
  }

  /// Writes `message` and reads until the response ends.
  private static func exchange(
    _ descriptor: Int32, message: [UInt8], parser: inout HTTP1ResponseParser,
    deadline: ContinuousClock.Instant?,
    receive: (HTTP1ResponseParser.Event) throws(HTTPError) -> Void
  ) -> Result<Void, ExchangeFailure> {
    var offset = 0
    while offset < message.count {
      guard wait(descriptor, for: Int16(POLLOUT), until: deadline) else {
        return .failure(.timedOut)
      }
      let count = message.withUnsafeBytes {
        send(descriptor, $0.baseAddress! + offset, message.count - offset, noSignal)
      }
      if count < 0 {
        if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
        return .failure(.nothingReceived)
      }
      offset += count
    }
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    var anyByte = false
    while true {
      guard wait(descriptor, for: Int16(POLLIN), until: deadline) else {
        return .failure(.timedOut)
      }
      let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
      if count < 0 {
        if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
        return .failure(anyByte ? .connectionEnded : .nothingReceived)
      }
      let events: [HTTP1ResponseParser.Event]
      do throws(HTTP1ResponseParser.Failure) {
        if count == 0 {
          guard anyByte else { return .failure(.nothingReceived) }
          events = try parser.finish()
        } else {
          anyByte = true
          events = try parser.feed(buffer[0..<count])
        }
      } catch {
        if count == 0 { return .failure(.connectionEnded) }
        return .failure(.malformed(error.reason))
      }
      do throws(HTTPError) {
        for event in events { try receive(event) }
      } catch {
        return .failure(.receiver(error))
      }
      if parser.isComplete { return .success(()) }
    }
  }

  /// Waits until `descriptor` is ready for `events` or `deadline` passes (`false`). A socket
  /// that was shut down or failed counts as ready: the read or write that follows reports it.
  private static func wait(
    _ descriptor: Int32, for events: Int16, until deadline: ContinuousClock.Instant?
  ) -> Bool {
    while true {
      var milliseconds: Int32 = -1
      if let deadline {
        let left = deadline - .now
        guard left > .zero else { return false }
        let (seconds, attoseconds) = left.components
        milliseconds = Int32(clamping: seconds * 1_000 + attoseconds / 1_000_000_000_000_000 + 1)
      }
      var entry = pollfd(fd: descriptor, events: events, revents: 0)
      let result = poll(&entry, 1, milliseconds)
      if result > 0 { return true }
      if result == 0 { continue }  // the deadline check above ends it
      if errno != EINTR { return true }
    }
  }

  // MARK: - Connections

  private enum ConnectFailure: Error {
    case timedOut
    case cancelled
    case failed(String)
  }

  /// Opens a TCP connection to `host:port`, trying each address the name resolves to.
  private static func connect(
    host: String, port: Int, deadline: ContinuousClock.Instant?, control: TransferControl
  ) -> Result<Int32, ConnectFailure> {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = socketStream
    var list: UnsafeMutablePointer<addrinfo>?
    let name = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
    let resolved = getaddrinfo(name, String(port), &hints, &list)
    guard resolved == 0, let list else {
      return .failure(.failed("host not found"))
    }
    defer { freeaddrinfo(list) }
    var reason = "connection refused"
    var entry: UnsafeMutablePointer<addrinfo>? = list
    while let address = entry {
      entry = address.pointee.ai_next
      if control.isCancelled { return .failure(.cancelled) }
      let descriptor = socket(
        address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
      guard descriptor >= 0 else { continue }
      _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
      _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
      var one: Int32 = 1
      _ = setsockopt(
        descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
      #if canImport(Darwin)
      _ = setsockopt(
        descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
      #endif
      guard control.attach(descriptor) else {
        close(descriptor)
        return .failure(.cancelled)
      }
      defer { control.detach() }
      if Foundation.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
        return .success(descriptor)
      }
      guard errno == EINPROGRESS else {
        reason = String(cString: strerror(errno))
        close(descriptor)
        continue
      }
      guard wait(descriptor, for: Int16(POLLOUT), until: deadline) else {
        close(descriptor)
        return .failure(.timedOut)
      }
      var error: Int32 = 0
      var length = socklen_t(MemoryLayout<Int32>.size)
      getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
      if error == 0 {
        if control.isCancelled {
          close(descriptor)
          return .failure(.cancelled)
        }
        return .success(descriptor)
      }
      reason = error == ECONNREFUSED ? "connection refused" : String(cString: strerror(error))
      close(descriptor)
    }
    return .failure(.failed(reason))
  }

  /// An idle connection to `server` the server has not closed, if any.
  private func takeIdle(_ server: String) -> Int32? {
    while let descriptor = idle.withLock({ $0[server]?.popLast() }) {
      // Readable while idle means closed (or a stray byte): either way, not reusable.
      var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      if poll(&entry, 1, 0) == 0 { return descriptor }
      close(descriptor)
    }
    return nil
  }

  private func putIdle(_ descriptor: Int32, _ server: String) {
    let evicted = idle.withLock { idle -> Int32? in
      idle[server, default: []].append(descriptor)
      guard idle[server]!.count > maximumIdlePerServer else { return nil }
      return idle[server]!.removeFirst()
    }
    if let evicted { close(evicted) }
  }

  // MARK: - The request's bytes

  /// The request line, the headers and the body. A header name or value with a line break
  /// (which would smuggle a second request) is an invalid request.
  static func serialize(
    _ request: URLRequest, host: String, port: Int
  ) -> Result<[UInt8], HTTPError> {
    let url = request.url!
    let method = request.httpMethod ?? "GET"
    guard !method.isEmpty, method.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      return .failure(.invalidRequest("the method \"\(method)\" is not a token"))
    }
    var target = url.path.isEmpty ? "/" : url.path
    if let components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
      target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
      if let query = components.percentEncodedQuery { target += "?" + query }
    }
    var head = "\(method) \(target) HTTP/1.1\r\n"
    head += "Host: \(host)\(port == 80 ? "" : ":\(port)")\r\n"
    let body = request.httpBody ?? Data()
    // Each name is lower-cased once, for every check below.
    var fields: [(name: String, value: String)] = []
    var hasUserAgent = false
    var hasAcceptEncoding = false
    for (name, value) in request.allHTTPHeaderFields ?? [:] {
      switch name.lowercased() {
      case "host", "content-length", "transfer-encoding", "connection": continue
      case "user-agent": hasUserAgent = true
      case "accept-encoding": hasAcceptEncoding = true
      default: break
      }
      fields.append((name, value))
    }
    if !hasUserAgent { fields.append(("User-Agent", "Tether")) }
    // Nothing is decompressed here: say so (without the header, any coding would be fair).
    if !hasAcceptEncoding { fields.append(("Accept-Encoding", "identity")) }
    for (name, value) in fields.sorted(by: { $0.name < $1.name }) {
      guard !name.isEmpty, !name.utf8.contains(where: { $0 <= 0x20 || $0 == 0x3A || $0 >= 0x7F }),
        !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
      else {
        return .failure(.invalidRequest("the header \"\(name)\" has a line break or a bad name"))
      }
      head += "\(name): \(value)\r\n"
    }
    if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) {
      head += "Content-Length: \(body.count)\r\n"
    }
    head += "\r\n"
    return .success(Array(head.utf8) + body)
  }
}

/// The cancellation switch of one transfer: cancelling shuts down the socket it is using,
/// which wakes the thread blocked on it.
private final class TransferControl: Sendable {
  private struct State {
    var cancelled = false
    var descriptor: Int32?
  }

  private let state = Lock(State())

  var isCancelled: Bool { state.withLock { $0.cancelled } }

  func cancel() {
    state.withLock { state in
      state.cancelled = true
      // Shut down (not closed: the transfer's thread closes it, so the number is never
      // reused under it).
      if let descriptor = state.descriptor { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }
  }

  /// Records the socket in use; `false` if the transfer was cancelled already.
  func attach(_ descriptor: Int32) -> Bool {
    state.withLock { state in
      guard !state.cancelled else { return false }
      state.descriptor = descriptor
      return true
    }
  }

  func detach() {
    state.withLock { $0.descriptor = nil }
  }
}

#if canImport(Glibc)
private let socketStream = Int32(SOCK_STREAM.rawValue)
private let noSignal = Int32(MSG_NOSIGNAL)
#else
private let socketStream = SOCK_STREAM
private let noSignal: Int32 = 0
#endif
