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
/// connects (trying each resolved address), writes one exchange's request while reading its
/// answer — so an early answer such as a 413 to a large upload arrives while the body is still
/// being sent — and parses the answer with ``HTTP1ResponseParser``.
///
/// Its lifecycle: `new` → `connecting` → `idle` ⇄ `busy` → `closed`. Timeouts belong to the
/// owner (the connection has no idea how long a request may take); an owner ends a slow
/// exchange with ``abort(_:)``.
///
/// Confined to its loop: every method is called on the loop's thread.
final class HTTP1Connection: EventLoopHandler, @unchecked Sendable {
  // @unchecked Sendable: every mutable property is touched only on `loop`'s thread; the one
  // hop from another thread (the resolver's answer) goes through `loop.execute`.
  private enum State {
    case new
    case connecting
    case idle
    case busy
    case closed
  }

  let id: Int
  let loop: EventLoop
  /// `scheme://host:port`, for errors that are about the connection, not a request.
  let origin: String
  private weak var owner: (any HTTP1ConnectionOwner)?
  private var state = State.new
  private var descriptor: Int32 = -1
  private var token: UInt64 = 0

  // Connecting
  private var addresses: [SocketAddress] = []
  private var nextAddress = 0
  private var connectTimer: TimerID?
  private var connectFailure = "connection refused"

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

  init(id: Int, loop: EventLoop, origin: String, owner: any HTTP1ConnectionOwner) {
    self.id = id
    self.loop = loop
    self.origin = origin
    self.owner = owner
  }

  deinit {
    if descriptor >= 0 { closeDescriptor(descriptor) }
  }

  /// Whether the connection has served an exchange already (it is a kept-alive one).
  var isReused: Bool { completedExchanges > 0 }

  // MARK: - Connecting

  /// Resolves `host` and connects, within `timeout` seconds; reports
  /// `connectionEstablished` or `connectionFailed`.
  func connect(host: String, port: Int, timeout: Double) {
    guard case .new = state else { return }
    state = .connecting
    connectTimer = loop.schedule(at: Monotonic.deadline(after: timeout)) { [weak self] in
      guard let self, case .connecting = self.state else { return }
      self.failConnecting(.timedOut(url: self.origin, after: timeout))
    }
    Resolver.shared.resolve(host, port: port) { [weak self, loop] result in
      let connection = self
      if loop.inLoop {
        connection?.resolved(result)
      } else {
        loop.execute { connection?.resolved(result) }
      }
    }
  }

  private func resolved(_ result: Result<[SocketAddress], HTTPError>) {
    guard case .connecting = state else { return }
    switch result {
    case .success(let list):
      addresses = list
      tryNextAddress()
    case .failure:
      failConnecting(.unreachable(url: origin, reason: "host not found"))
    }
  }

  private func tryNextAddress() {
    while nextAddress < addresses.count {
      let address = addresses[nextAddress]
      nextAddress += 1
      let socketDescriptor = socket(address.family, socketStreamType, 0)
      guard socketDescriptor >= 0 else {
        connectFailure = String(cString: strerror(errno))
        continue
      }
      _ = fcntl(socketDescriptor, F_SETFD, FD_CLOEXEC)
      _ = fcntl(socketDescriptor, F_SETFL, fcntl(socketDescriptor, F_GETFL) | O_NONBLOCK)
      var one: Int32 = 1
      _ = setsockopt(
        socketDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one,
        socklen_t(MemoryLayout<Int32>.size))
      #if canImport(Darwin)
      _ = setsockopt(
        socketDescriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
      #endif
      let result = address.withSockaddr { Foundation.connect(socketDescriptor, $0, $1) }
      if result == 0 || errno == EINPROGRESS {
        descriptor = socketDescriptor
        token = loop.register(socketDescriptor, self)
        if result == 0 {
          established()
        } else {
          updateInterest()
        }
        return
      }
      connectFailure =
        errno == ECONNREFUSED ? "connection refused" : String(cString: strerror(errno))
      closeDescriptor(socketDescriptor)
    }
    failConnecting(.unreachable(url: origin, reason: connectFailure))
  }

  private func connectCompleted() {
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
    if error == 0 {
      established()
      return
    }
    if error == EINPROGRESS || error == EALREADY { return }
    connectFailure = error == ECONNREFUSED ? "connection refused" : String(cString: strerror(error))
    closeSocket()
    tryNextAddress()
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
  }

  /// Ends the exchange in progress with `error` (the owner's timeout or a cancellation) and
  /// closes the connection; a connection not busy just closes.
  func abort(_ error: HTTPError) {
    switch state {
    case .busy:
      // The owner's decision, not a dead kept-alive connection: never sent again.
      failExchange(error, mayBeStale: false)
    case .connecting:
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
    let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
    return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
  }

  // MARK: - Readiness

  func handleReadiness(readable: Bool, writable: Bool) {
    switch state {
    case .connecting:
      if writable || readable { connectCompleted() }
    case .idle:
      // Readable while idle: the server closed it (or sent bytes nobody asked for).
      guard readable else { return }
      closeSocket()
      state = .closed
      owner?.idleConnectionClosed(self)
    case .busy:
      if writable, written < message.count, !writeFailed {
        flush()
        guard case .busy = state else { return }
      }
      if readable, !paused {
        readOnce()
        guard case .busy = state else { return }
      }
      updateInterest()
    case .new, .closed:
      break
    }
  }

  private func flush() {
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

  private func readOnce() {
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
      guard anyByte else {
        failExchange(.truncated(url: url, expected: nil, received: 0))
        return
      }
      do throws(HTTP1ResponseParser.Failure) {
        events = try parser.finish()
      } catch {
        failExchange(
          .truncated(url: url, expected: parser.expectedLength, received: parser.received))
        return
      }
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
    case .connecting:
      loop.setInterest(descriptor, token: token, read: false, write: true)
    case .idle:
      loop.setInterest(descriptor, token: token, read: true, write: false)
    case .busy:
      loop.setInterest(
        descriptor, token: token, read: !paused,
        write: written < message.count && !writeFailed)
    case .new, .closed:
      loop.setInterest(descriptor, token: token, read: false, write: false)
    }
  }

  private func closeSocket() {
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
