import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a connection reports to whoever opened it: a ``ConnectionPool``, or the
/// ``StreamExchange`` that owns it alone. Called on the connection's loop, always as the last
/// thing the connection does in that step, so the owner may hand it the next exchange at once.
protocol HTTP1ConnectionOwner: AnyObject {
  func connectionEstablished(_ connection: HTTP1Connection)
  func connectionFailed(_ connection: HTTP1Connection, _ error: HTTPError)
  /// The exchange got its whole answer; `reusable` when the connection stays open for another.
  func exchangeFinished(_ connection: HTTP1Connection, reusable: Bool)
  /// The exchange failed and the connection is closed. `reusedAndSilent`: the connection had
  /// served an earlier exchange and ended before one byte of this answer (the server most
  /// likely closed it while idle, so the request may never have reached it).
  func exchangeFailed(_ connection: HTTP1Connection, _ error: HTTPError, reusedAndSilent: Bool)
  /// An idle connection was closed by the server (or failed).
  func idleConnectionClosed(_ connection: HTTP1Connection)
  /// The connection, handed an exchange, was found unusable before sending anything (the
  /// server closed it, or sent bytes nobody asked for); it is closed, and nothing was sent.
  func exchangeNotStarted(_ connection: HTTP1Connection)
}

/// Where one exchange's answer goes, as it arrives. Called on the connection's loop.
protocol ExchangeSink: AnyObject {
  /// The head; an error aborts the exchange.
  func receiveHead(status: Int, headers: [String: String]) -> HTTPError?
  /// A piece of the body.
  func receiveBody(_ piece: Data) -> BodyDecision
}

/// What a sink wants after a piece of body.
enum BodyDecision {
  case proceed
  /// Stop reading the socket until ``HTTP1Connection/resumeReading()`` (backpressure: the
  /// kernel's buffers fill and TCP slows the server down).
  case pause
  case abort(HTTPError)
}

/// One HTTP/1.1 connection over a non-blocking TCP socket, driven by its ``EventLoop``: it
/// connects (trying each resolved address), opens a proxy's `CONNECT` tunnel and runs TLS
/// when its ``ConnectionRoute`` says so, writes one exchange's request while reading its
/// answer — so an early answer such as a 413 to a large upload arrives while the body is still
/// being sent — and parses the answer with ``HTTP1ResponseParser``.
///
/// Its lifecycle: `new` → `connecting` → (`tunnelling`) → (`handshaking`) → `idle` ⇄ `busy` →
/// `closed`. The connect timeout covers everything before `idle`. Other timeouts belong to the
/// owner (the connection has no idea how long a request may take); an owner ends a slow
/// exchange with ``abort(_:)``.
///
/// Over TLS, epoll's interest follows what the session waits for: a write may wait for the
/// socket to be readable and a read for it to be writable (TLS updating keys). An idle TLS
/// connection that turns readable with only session tickets (TLS 1.3 sends them after the
/// handshake) stays idle and reusable: only an answer byte, a close or a failure ends it. The
/// session never owns the descriptor: closing sends close_notify, frees the session, then
/// closes the socket once.
///
/// Confined to its loop: every method is called on the loop's thread.
final class HTTP1Connection: EventLoopHandler, @unchecked Sendable {
  // @unchecked Sendable: every mutable property is touched only on `loop`'s thread; the one
  // hop from another thread (the resolver's answer) goes through `loop.execute`.
  private enum State {
    case new
    case connecting
    /// Sending a proxy `CONNECT` and reading its answer.
    case tunnelling
    /// The TLS handshake with the origin.
    case handshaking
    case idle
    case busy
    case closed
  }

  let id: Int
  let loop: EventLoop
  /// `scheme://host:port`, for errors that are about the connection, not a request.
  let origin: String
  let route: ConnectionRoute
  private weak var owner: (any HTTP1ConnectionOwner)?
  private var state = State.new
  private var descriptor: Int32 = -1
  private var token: UInt64 = 0

  // Connecting
  private var connector: TCPConnector?
  private var connectTimer: TimerID?
  private var tunnel: ProxyTunnel?

  // TLS: the session, and what each direction waits for (a TLS read may need the socket to be
  // writable, a write may need it readable).
  private var session: TLSSession?
  private var readWaitsFor = Readiness.readable
  private var writeWaitsFor = Readiness.writable
  private enum Readiness { case readable, writable }

  // The exchange in progress
  private var sink: (any ExchangeSink)?
  private var requestURL: URL?
  /// The request's URL as errors show it, worked out only when one is needed.
  private var url: String { requestURL.map(HTTPError.redacted) ?? origin }
  private var message: [UInt8] = []
  private var written = 0
  private var writeFailed = false
  private var parser = HTTP1ResponseParser()
  private var anyByte = false
  private var paused = false
  private var completedExchanges = 0

  init(id: Int, loop: EventLoop, route: ConnectionRoute, owner: any HTTP1ConnectionOwner) {
    self.id = id
    self.loop = loop
    self.route = route
    self.origin = route.origin
    self.owner = owner
  }

  deinit {
    // The session (freed after this) never closes the descriptor: this is its one close.
    session?.close()
    if descriptor >= 0 { closeDescriptor(descriptor) }
  }

  /// Whether the connection has served an exchange already (it is a kept-alive one).
  var isReused: Bool { completedExchanges > 0 }

  // MARK: - Connecting

  /// Resolves the route's host and connects (with its tunnel and TLS handshake), within
  /// `timeout` seconds; reports `connectionEstablished` or `connectionFailed`.
  func connect(timeout: Double) {
    guard case .new = state else { return }
    state = .connecting
    let deadline = Monotonic.deadline(after: timeout)
    connectTimer = loop.schedule(at: deadline) { [weak self] in
      guard let self else { return }
      switch self.state {
      case .connecting, .tunnelling, .handshaking:
        self.failConnecting(.timedOut(url: self.origin, after: timeout))
      default:
        break
      }
    }
    let connector = TCPConnector(loop: loop, route: route)
    self.connector = connector
    connector.start(deadline: deadline) { [weak self] result in
      guard let self, case .connecting = self.state else { return }
      self.connector = nil
      switch result {
      case .success(let connected):
        self.descriptor = connected
        self.token = self.loop.register(connected, self)
        self.connected()
      case .failure(let error):
        self.failConnecting(error)
      }
    }
  }

  /// TCP is up: open the tunnel, start TLS, or be ready.
  private func connected() {
    if let request = route.tunnelRequest {
      state = .tunnelling
      tunnel = ProxyTunnel(request: request)
      tunnelStep(readable: false, writable: true)
    } else {
      startTLSOrEstablish()
    }
  }

  /// Takes the `CONNECT` tunnel a step; once the proxy opened it, TLS starts.
  private func tunnelStep(readable: Bool, writable: Bool) {
    guard var tunnel else { return }
    let outcome = tunnel.step(
      descriptor, readable: readable, writable: writable, buffer: loop.readBuffer)
    self.tunnel = tunnel
    switch outcome {
    case .pending:
      updateInterest()
    case .open:
      self.tunnel = nil
      startTLSOrEstablish()
    case .failed(let reason):
      failConnecting(.unreachable(url: origin, reason: reason))
    }
  }

  private func startTLSOrEstablish() {
    guard let context = route.tls else {
      established()
      return
    }
    do throws(TLSFailure) {
      session = try TLSSession(context: context, descriptor: descriptor, host: route.serverName)
    } catch {
      failConnecting(error.httpError(url: origin))
      return
    }
    state = .handshaking
    handshakeStep()
  }

  private func handshakeStep() {
    guard let session else { return }
    switch session.handshake() {
    case .done:
      established()
    case .wantRead:
      readWaitsFor = .readable
      loop.setInterest(descriptor, token: token, read: true, write: false)
    case .wantWrite:
      readWaitsFor = .writable
      loop.setInterest(descriptor, token: token, read: false, write: true)
    case .failed(let failure):
      failConnecting(failure.httpError(url: origin))
    }
  }

  private func established() {
    loop.cancel(connectTimer)
    connectTimer = nil
    state = .idle
    updateInterest()
    owner?.connectionEstablished(self)
  }

  private func failConnecting(_ error: HTTPError) {
    loop.cancel(connectTimer)
    connectTimer = nil
    closeSocket()
    state = .closed
    owner?.connectionFailed(self, error)
  }

  // MARK: - Exchanges

  /// Sends `message` (a whole request) and hands the answer to `sink`. `url` names the
  /// request in errors; `isHead` says the answer has no body.
  func execute(_ message: [UInt8], url: URL, isHead: Bool, sink: any ExchangeSink) {
    guard case .idle = state, completedExchanges == 0 || isQuietWhileIdle() else {
      // A kept-alive connection the server closed, or with stray bytes waiting (a late part
      // of an earlier answer would be read as this one's): nothing is sent on it.
      closeSocket()
      state = .closed
      owner?.exchangeNotStarted(self)
      return
    }
    state = .busy
    readWaitsFor = .readable
    writeWaitsFor = .writable
    self.sink = sink
    requestURL = url
    self.message = message
    written = 0
    writeFailed = false
    anyByte = false
    paused = false
    parser = HTTP1ResponseParser(isHeadRequest: isHead)
    flush()
    guard case .busy = state else { return }
    updateInterest()
  }

  /// Reads again after a sink paused the exchange.
  func resumeReading() {
    guard case .busy = state, paused else { return }
    paused = false
    updateInterest()
    // Bytes TLS decrypted already do not make the socket readable: read them now.
    if let session, session.bufferedByteCount > 0 {
      loop.execute { [weak self] in
        guard let self, case .busy = self.state, !self.paused else { return }
        self.readOnce()
        guard case .busy = self.state else { return }
        self.updateInterest()
      }
    }
  }

  /// Ends the exchange in progress with `error` (the owner's timeout or a cancellation) and
  /// closes the connection; a connection not busy just closes.
  func abort(_ error: HTTPError) {
    switch state {
    case .busy:
      // The owner's decision, not a dead kept-alive connection: never sent again.
      failExchange(error, mayBeStale: false)
    case .connecting, .tunnelling, .handshaking:
      failConnecting(error)
    default:
      close()
    }
  }

  /// Closes the connection without telling the owner (it asked for it).
  func close() {
    loop.cancel(connectTimer)
    connectTimer = nil
    closeSocket()
    state = .closed
    sink = nil
  }

  /// Whether an idle connection has nothing to read: no end of the stream, no stray byte.
  /// Readiness may not have been reported yet when a request arrives right after the
  /// previous answer, so this asks the socket itself.
  private func isQuietWhileIdle() -> Bool {
    var byte: UInt8 = 0
    // Over TLS the waiting bytes may be session tickets, which TLS takes without a byte for
    // HTTP: read them, then look again.
    for _ in 0..<8 {
      let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
      if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
        return (session?.bufferedByteCount ?? 0) == 0
      }
      guard session != nil, count > 0, isStillIdleAfterTLSRead() else { return false }
    }
    return false
  }

  /// Reads what an idle TLS connection received: `true` when it was only TLS's own records
  /// (session tickets, a key update), `false` for a byte of HTTP, a close or a failure.
  private func isStillIdleAfterTLSRead() -> Bool {
    guard let session else { return false }
    switch session.read(into: loop.readBuffer) {
    case .wantRead, .wantWrite: return true
    case .bytes, .closed, .failed: return false
    }
  }

  // MARK: - Readiness

  func handleReadiness(readable: Bool, writable: Bool) {
    switch state {
    case .tunnelling:
      tunnelStep(readable: readable, writable: writable)
    case .handshaking:
      if readable || writable { handshakeStep() }
    case .idle:
      // Readable while idle: the server closed it (or sent bytes nobody asked for), or, over
      // TLS, sent session tickets, which leave the connection idle.
      guard readable || writable else { return }
      if session != nil, isStillIdleAfterTLSRead() {
        updateInterest()
        return
      }
      closeSocket()
      state = .closed
      owner?.idleConnectionClosed(self)
    case .busy:
      if written < message.count, !writeFailed,
        writeWaitsFor == .writable ? writable : readable
      {
        flush()
        guard case .busy = state else { return }
      }
      if !paused, readWaitsFor == .readable ? readable : writable {
        readOnce()
        guard case .busy = state else { return }
      }
      updateInterest()
    case .new, .connecting, .closed:
      break
    }
  }

  private func flush() {
    if let session {
      flushTLS(session)
      return
    }
    while written < message.count {
      let count = message.withUnsafeBytes {
        send(descriptor, $0.baseAddress! + written, message.count - written, sendNoSignal)
      }
      if count > 0 {
        written += count
        continue
      }
      if count < 0, errno == EINTR { continue }
      if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return }
      // The server stopped reading (it may have answered early, or closed): stop writing and
      // read what it said; the read reports the end.
      writeFailed = true
      return
    }
  }

  private func flushTLS(_ session: TLSSession) {
    while written < message.count {
      let result = message.withUnsafeBytes {
        session.write(UnsafeRawBufferPointer(rebasing: $0[written...]))
      }
      switch result {
      case .wrote(let count):
        written += count
      case .wantWrite:
        writeWaitsFor = .writable
        return
      case .wantRead:
        writeWaitsFor = .readable
        return
      case .failed:
        // As for plain sockets: stop writing, and let the read report what happened.
        writeFailed = true
        return
      }
    }
  }

  /// Reads TLS records while they come (each read returns at most one), up to a bound so that
  /// one busy connection does not hold its loop.
  private func readTLS(_ session: TLSSession) {
    let buffer = loop.readBuffer
    for _ in 0..<16 {
      switch session.read(into: buffer) {
      case .bytes(let count):
        anyByte = true
        let events: [HTTP1ResponseParser.Event]
        do throws(HTTP1ResponseParser.Failure) {
          events = try parser.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        } catch {
          failExchange(.unreachable(url: url, reason: "not an HTTP response: \(error.reason)"))
          return
        }
        deliver(events)
        guard case .busy = state, !paused else { return }
      case .wantRead:
        readWaitsFor = .readable
        return
      case .wantWrite:
        readWaitsFor = .writable
        return
      case .closed:
        readEnded()
        return
      case .failed(let failure):
        // A reset of a kept-alive connection before any byte is still "stale" (the pool sends
        // again); any other failure names TLS's reason, such as a refused client certificate.
        if !anyByte, completedExchanges > 0 {
          failExchange(.truncated(url: url, expected: nil, received: 0))
        } else {
          failExchange(failure.httpError(url: url))
        }
        return
      }
    }
  }

  private func readOnce() {
    if let session {
      readTLS(session)
      return
    }
    let buffer = loop.readBuffer
    let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
    if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
    let events: [HTTP1ResponseParser.Event]
    if count > 0 {
      anyByte = true
      do throws(HTTP1ResponseParser.Failure) {
        events = try parser.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
      } catch {
        failExchange(.unreachable(url: url, reason: "not an HTTP response: \(error.reason)"))
        return
      }
    } else {
      // The end of the connection (0) or its failure (a reset).
      readEnded()
      return
    }
    deliver(events)
  }

  /// The server ended the connection (or it failed) while an answer was expected.
  private func readEnded() {
    guard anyByte else {
      failExchange(.truncated(url: url, expected: nil, received: 0))
      return
    }
    let events: [HTTP1ResponseParser.Event]
    do throws(HTTP1ResponseParser.Failure) {
      events = try parser.finish()
    } catch {
      failExchange(
        .truncated(url: url, expected: parser.expectedLength, received: parser.received))
      return
    }
    deliver(events)
  }

  private func deliver(_ events: [HTTP1ResponseParser.Event]) {
    for event in events {
      guard let sink else { return }
      switch event {
      case .head(let status, let headers):
        if let error = sink.receiveHead(status: status, headers: headers) {
          failExchange(error)
          return
        }
      case .body(let piece):
        guard !piece.isEmpty else { continue }
        switch sink.receiveBody(piece) {
        case .proceed: break
        case .pause: paused = true
        case .abort(let error):
          failExchange(error)
          return
        }
      case .end:
        finishExchange()
        return
      }
    }
  }

  private func finishExchange() {
    let reusable =
      parser.keepAlive && !parser.hasTrailingBytes && written == message.count && !writeFailed
    completedExchanges += 1
    sink = nil
    message = []
    if reusable {
      state = .idle
      updateInterest()
    } else {
      closeSocket()
      state = .closed
    }
    owner?.exchangeFinished(self, reusable: reusable)
  }

  private func failExchange(_ error: HTTPError, mayBeStale: Bool = true) {
    let reusedAndSilent = mayBeStale && completedExchanges > 0 && !anyByte
    sink = nil
    message = []
    closeSocket()
    state = .closed
    owner?.exchangeFailed(self, error, reusedAndSilent: reusedAndSilent)
  }

  // MARK: - The socket

  private func updateInterest() {
    guard descriptor >= 0 else { return }
    switch state {
    case .tunnelling:
      loop.setInterest(
        descriptor, token: token, read: true, write: tunnel?.wantsToWrite ?? false)
    case .handshaking:
      loop.setInterest(
        descriptor, token: token, read: readWaitsFor == .readable,
        write: readWaitsFor == .writable)
    case .idle:
      loop.setInterest(descriptor, token: token, read: true, write: false)
    case .busy:
      let reading = !paused
      let writing = written < message.count && !writeFailed
      loop.setInterest(
        descriptor, token: token,
        read: (reading && readWaitsFor == .readable) || (writing && writeWaitsFor == .readable),
        write: (writing && writeWaitsFor == .writable) || (reading && readWaitsFor == .writable))
    case .new, .connecting, .closed:
      loop.setInterest(descriptor, token: token, read: false, write: false)
    }
  }

  private func closeSocket() {
    connector?.cancel()
    connector = nil
    // close_notify and the session's memory first; the descriptor is ours alone to close.
    session?.close()
    session = nil
    guard descriptor >= 0 else { return }
    loop.deregister(descriptor, token: token)
    closeDescriptor(descriptor)
    descriptor = -1
  }
}

/// `close(2)`, spelled so that it does not collide with ``HTTP1Connection/close()``.
@inline(__always)
func closeDescriptor(_ descriptor: Int32) {
  _ = close(descriptor)
}
