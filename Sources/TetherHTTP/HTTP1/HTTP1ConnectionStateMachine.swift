/// One HTTP/1.1 connection's lifecycle as a pure state machine: events in, actions out, no
/// I/O, no clock. ``HTTP1Connection`` feeds it what its socket, parser, sink and timers
/// report and performs what it returns, so every transition is unit-tested without a socket.
///
/// Its states: `new` → `connecting` → (`tunnelling`) → (`handshaking`) → `idle` ⇄ `busy` →
/// `closed`.
///
/// What it keeps true:
/// - the owner hears of each connection attempt once (`reportEstablished` or
///   `failConnecting`), and of each exchange once (`finishExchange`, `failExchange` or
///   `refuseExchange`); nothing is reported after `closed`;
/// - an answer is delivered in order: its head once, then body pieces, then its end; nothing
///   after the exchange ended;
/// - never more bytes written than the request has; a connection goes back to idle only when
///   the whole request was written and the answer allows keep-alive;
/// - a kept-alive connection is used again only if it is quiet (no end of stream, no stray
///   byte), and an exchange that fails on one before any answer byte says so
///   (`reusedAndSilent`), so the pool may send an idempotent request again.
struct HTTP1ConnectionStateMachine {
  /// Where the connection stands.
  enum State: Equatable {
    case new
    /// Resolving and connecting TCP.
    case connecting
    /// Opening a proxy's `CONNECT` tunnel.
    case tunnelling
    /// The TLS handshake with the origin.
    case handshaking
    case idle
    case busy(Exchange)
    case closed
  }

  /// The exchange in progress.
  struct Exchange: Equatable {
    /// The request's length in bytes.
    let length: Int
    var written = 0
    /// The peer stopped taking the request: the rest is never written.
    var writeFailed = false
    /// Whether any byte of the answer arrived.
    var anyByte = false
    var headDelivered = false
    /// The sink asked to stop reading until ``HTTP1ConnectionStateMachine/resumeReading()``.
    var paused = false

    /// Whether part of the request is still to be written.
    var wantsToWrite: Bool { written < length && !writeFailed }
  }

  /// Why an exchange failed, before it is named by its request's URL (worked out only when an
  /// error is made: it costs a parse).
  enum Failure: Equatable {
    /// The connection ended before one byte of the answer.
    case silentEnd
    /// The connection ended inside the answer.
    case truncated(expected: Int?, received: Int)
    /// The bytes are not an HTTP/1.1 answer; the parser's reason.
    case notHTTP(String)
    /// The byte stream failed (TLS's reason, with its refusal if it is one).
    case stream(FailureReason)
    /// The sink or the owner ended the exchange with this error.
    case error(HTTPError)

    /// The error a request to `url` fails with.
    func httpError(url: String) -> HTTPError {
      switch self {
      case .silentEnd: .truncated(url: url, expected: nil, received: 0)
      case .truncated(let expected, let received):
        .truncated(url: url, expected: expected, received: received)
      case .notHTTP(let reason): .unreachable(url: url, reason: "not an HTTP response: \(reason)")
      case .stream(let reason): .unreachable(url: url, reason: reason)
      case .error(let error): error
      }
    }
  }

  /// What the connection's driver must do.
  enum Action: Equatable {
    /// Nothing.
    case none
    /// Arm the connect timer and open TCP to the route's first hop; report `socketConnected`
    /// or `establishmentFailed`.
    case connect
    /// Send the proxy's `CONNECT`; report `tunnelOpened` or `establishmentFailed`.
    case openTunnel
    /// Start TLS with the origin; report `handshakeDone` or `establishmentFailed`.
    case startHandshake
    /// Take the step that readiness allows: the tunnel's, or the handshake's.
    case stepTunnel
    case stepHandshake
    /// Cancel the connect timer, watch the idle socket, tell the owner it is established.
    case reportEstablished
    /// Cancel the connect timer, close, tell the owner the connection failed.
    case failConnecting(HTTPError)
    /// Start the exchange: a new parser, then write and read as the stream allows.
    case startExchange
    /// Close and tell the owner nothing was sent (a kept-alive connection that is not quiet).
    case refuseExchange
    /// Write what the stream takes (when `write`), then read what it has (when `read`), then
    /// set the socket's interest.
    case transfer(write: Bool, read: Bool)
    /// Read the idle socket: TLS's own records keep it idle; anything else ends it.
    case readIdle
    /// Hand the parsed head to the sink.
    case deliverHead
    /// Hand the parsed piece of body to the sink.
    case deliverBody
    /// The stream ended after some answer: the parser's end of input decides (a body that
    /// runs to the close ends; anything else is truncated).
    case finishParsing
    /// Read again: the interest changes, and bytes the stream holds are read without waiting.
    case resumeReading
    /// Forget the exchange, then watch the idle socket (`reusable`) or close; tell the owner.
    case finishExchange(reusable: Bool)
    /// Close and tell the owner the exchange failed.
    case failExchange(Failure, reusedAndSilent: Bool)
    /// Close and tell the owner the idle connection ended.
    case closeIdle
    /// Close without telling the owner (it asked).
    case close
  }

  private(set) var state = State.new
  /// Exchanges answered in full on this connection.
  private(set) var completedExchanges = 0
  let tunnels: Bool
  let usesTLS: Bool

  /// A connection whose establishment opens a tunnel first (`tunnels`), then runs TLS
  /// (`usesTLS`).
  init(tunnels: Bool, usesTLS: Bool) {
    self.tunnels = tunnels
    self.usesTLS = usesTLS
  }

  // MARK: - What the driver and tests look at

  /// Whether the connection has served an exchange already (it is a kept-alive one).
  var isReused: Bool { completedExchanges > 0 }

  /// Whether the connection is being established.
  var isEstablishing: Bool {
    switch state {
    case .connecting, .tunnelling, .handshaking: true
    default: false
    }
  }

  /// The exchange in progress, if any.
  var exchange: Exchange? {
    if case .busy(let exchange) = state { exchange } else { nil }
  }

  /// Whether an exchange runs and reads (not paused).
  var isReading: Bool { exchange.map { !$0.paused } ?? false }

  /// What the connection wants to do with its stream: the driver asks the stream which
  /// socket readiness that means. While tunnelling, the tunnel adds its own write.
  var interest: (reading: Bool, writing: Bool) {
    switch state {
    case .tunnelling, .handshaking, .idle: (true, false)
    case .busy(let exchange): (!exchange.paused, exchange.wantsToWrite)
    case .new, .connecting, .closed: (false, false)
    }
  }

  // MARK: - Establishment

  /// The owner asked for the connection.
  mutating func connect() -> Action {
    guard case .new = state else { return .none }
    state = .connecting
    return .connect
  }

  /// TCP is up.
  mutating func socketConnected() -> Action {
    guard case .connecting = state else { return .none }
    if tunnels {
      state = .tunnelling
      return .openTunnel
    }
    return afterTunnel()
  }

  /// The proxy opened the tunnel.
  mutating func tunnelOpened() -> Action {
    guard case .tunnelling = state else { return .none }
    return afterTunnel()
  }

  /// The TLS handshake completed and the certificate was verified.
  mutating func handshakeDone() -> Action {
    guard case .handshaking = state else { return .none }
    state = .idle
    return .reportEstablished
  }

  /// Establishment failed: no address connected, the tunnel was refused, the handshake failed,
  /// or the connect timer fired.
  mutating func establishmentFailed(_ error: HTTPError) -> Action {
    guard isEstablishing else { return .none }
    state = .closed
    return .failConnecting(error)
  }

  private mutating func afterTunnel() -> Action {
    if usesTLS {
      state = .handshaking
      return .startHandshake
    }
    state = .idle
    return .reportEstablished
  }

  // MARK: - Exchanges

  /// The owner hands the connection a request of `length` bytes (never while an exchange
  /// runs). `quiet`: the idle socket has nothing to read (asked only of a reused connection; a
  /// new one is quiet).
  mutating func startExchange(length: Int, quiet: Bool) -> Action {
    guard case .idle = state, !isReused || quiet else {
      // Also when it closed already: the owner hears of every request it handed over.
      state = .closed
      return .refuseExchange
    }
    state = .busy(Exchange(length: length))
    return .startExchange
  }

  /// The stream took `count` more bytes of the request.
  mutating func wrote(_ count: Int) {
    guard case .busy(var exchange) = state else { return }
    exchange.written = min(exchange.length, exchange.written + max(0, count))
    state = .busy(exchange)
  }

  /// The stream refused the rest of the request: stop writing and let the read report what
  /// the server said (it may have answered early, or closed).
  mutating func writeFailed() {
    guard case .busy(var exchange) = state else { return }
    exchange.writeFailed = true
    state = .busy(exchange)
  }

  /// The socket is ready; `canRead` and `canWrite` say whether the stream's read and write can
  /// make progress (the stream translated the socket's readiness).
  mutating func readiness(canRead: Bool, canWrite: Bool) -> Action {
    switch state {
    case .tunnelling: return .stepTunnel
    case .handshaking: return canRead || canWrite ? .stepHandshake : .none
    case .idle: return canRead || canWrite ? .readIdle : .none
    case .busy(let exchange):
      return .transfer(write: canWrite && exchange.wantsToWrite, read: canRead && !exchange.paused)
    case .new, .connecting, .closed: return .none
    }
  }

  /// Bytes of the answer arrived (before the parser saw them).
  mutating func bytesReceived() {
    guard case .busy(var exchange) = state, !exchange.anyByte else { return }
    exchange.anyByte = true
    state = .busy(exchange)
  }

  /// The parser read the answer's head.
  mutating func receivedHead() -> Action {
    guard case .busy(var exchange) = state, !exchange.headDelivered else { return .none }
    exchange.headDelivered = true
    state = .busy(exchange)
    return .deliverHead
  }

  /// The parser read a piece of body.
  mutating func receivedBody() -> Action {
    guard case .busy(let exchange) = state, exchange.headDelivered else { return .none }
    return .deliverBody
  }

  /// The parser read the answer's end; `keepAlive`: the answer lets the connection serve
  /// another (and no stray byte followed it).
  mutating func receivedEnd(keepAlive: Bool) -> Action {
    guard case .busy(let exchange) = state, exchange.headDelivered else { return .none }
    let reusable = keepAlive && exchange.written == exchange.length && !exchange.writeFailed
    completedExchanges += 1
    state = reusable ? .idle : .closed
    return .finishExchange(reusable: reusable)
  }

  /// The answer is not HTTP; `reason` is the parser's.
  mutating func parseFailed(_ reason: String) -> Action {
    fail(.notHTTP(reason), mayBeStale: true)
  }

  /// The stream ended inside the answer (the parser's end of input refused it).
  mutating func endedInsideAnswer(expected: Int?, received: Int) -> Action {
    fail(.truncated(expected: expected, received: received), mayBeStale: true)
  }

  /// The sink paused the exchange.
  mutating func pauseReading() {
    guard case .busy(var exchange) = state else { return }
    exchange.paused = true
    state = .busy(exchange)
  }

  /// The consumer caught up: read again.
  mutating func resumeReading() -> Action {
    guard case .busy(var exchange) = state, exchange.paused else { return .none }
    exchange.paused = false
    state = .busy(exchange)
    return .resumeReading
  }

  /// The sink refused the answer (its head or a piece of body) with `error`.
  mutating func sinkRefused(_ error: HTTPError) -> Action {
    fail(.error(error), mayBeStale: true)
  }

  /// The stream ended (the peer closed it, or reset a plain socket).
  mutating func streamClosed() -> Action {
    switch state {
    case .idle:
      state = .closed
      return .closeIdle
    case .busy(let exchange):
      guard exchange.anyByte else { return fail(.silentEnd, mayBeStale: true) }
      return .finishParsing
    default:
      return .none
    }
  }

  /// The stream failed with `reason` (TLS's, with its refusal if it is one).
  mutating func streamFailed(_ reason: FailureReason) -> Action {
    switch state {
    case .idle:
      state = .closed
      return .closeIdle
    case .busy(let exchange):
      // A reset of a kept-alive connection before any byte is still "stale" (the pool sends
      // again); any other failure names the stream's reason, such as a refused client
      // certificate.
      if !exchange.anyByte, isReused { return fail(.silentEnd, mayBeStale: true) }
      return fail(.stream(reason), mayBeStale: true)
    default:
      return .none
    }
  }

  /// The idle socket turned readable and held a byte for HTTP (nobody asked for it).
  mutating func strayBytesWhileIdle() -> Action {
    guard case .idle = state else { return .none }
    state = .closed
    return .closeIdle
  }

  // MARK: - The owner's decisions

  /// The owner ends the connection with `error` (its timeout, a cancellation): an exchange in
  /// progress fails (and is never sent again), establishment fails; otherwise it just closes.
  mutating func abort(_ error: HTTPError) -> Action {
    switch state {
    case .busy:
      return fail(.error(error), mayBeStale: false)
    case .connecting, .tunnelling, .handshaking:
      return establishmentFailed(error)
    case .closed:
      return .none
    case .new, .idle:
      state = .closed
      return .close
    }
  }

  /// The owner closes the connection; it is not told.
  mutating func close() -> Action {
    state = .closed
    return .close
  }

  private mutating func fail(_ failure: Failure, mayBeStale: Bool) -> Action {
    guard case .busy(let exchange) = state else { return .none }
    state = .closed
    return .failExchange(
      failure, reusedAndSilent: mayBeStale && isReused && !exchange.anyByte)
  }
}
