import Foundation

/// One HTTP/1.1 connection over a non-blocking TCP socket, driven by its ``EventLoop``: the
/// small, dumb driver of ``HTTP1ConnectionStateMachine``. It connects (``TCPConnector``), opens
/// a proxy's `CONNECT` tunnel and runs TLS when its ``ConnectionRoute`` says so, writes one
/// exchange's request while reading its answer (an early answer, such as a 413 to a large
/// upload, arrives while the body is still being sent) and parses it with ``HTTP1ResponseParser``.
///
/// The connect timeout covers everything before `idle`. Other timeouts belong to the owner
/// (the connection has no idea how long a request may take); an owner ends a slow exchange
/// with ``abort(_:)``.
///
/// Plain and TLS connections take the same path: both are a ``ByteStream``, which keeps TLS's
/// inverted readiness to itself. An idle TLS connection that turns readable with only session
/// tickets (TLS 1.3 sends them after the handshake) stays idle and reusable: only an answer
/// byte, a close or a failure ends it.
///
/// Confined to its loop: every method is called on the loop's thread.
final class HTTP1Connection: EventLoopHandler, @unchecked Sendable {
  // @unchecked Sendable: every mutable property is touched only on `loop`'s thread; the one
  // hop from another thread (the resolver's answer) goes through `loop.execute` in the
  // connector.
  let id: Int
  let loop: EventLoop
  /// `scheme://host:port`, for errors that are about the connection, not a request.
  let origin: String
  let route: ConnectionRoute
  private weak var owner: (any HTTP1ConnectionOwner)?
  private var machine: HTTP1ConnectionStateMachine
  private var stream: (any ByteStream)?
  private var token: UInt64 = 0

  // Establishment
  private var connector: TCPConnector?
  private var connectTimer: TimerID?
  private var tunnel: ProxyTunnel?
  private var handshaking: TLSByteStream?
  /// The handshake's failure if every attempt would repeat it: the pool never retries those.
  private(set) var refusal: TLSRefusal?

  // The exchange in progress: what the machine does not need to decide anything.
  private var sink: (any ExchangeSink)?
  private var requestURL: URL?
  private var message: [UInt8] = []
  private var parser = HTTP1ResponseParser()
  /// The first poll begun after the connection last went idle: once the loop has handled it,
  /// the idle socket (watched for reading) held nothing then, or that ended the connection.
  private var quietAfterPoll = UInt64.max
  /// The request's URL as errors show it, worked out only when one is needed.
  private var url: String { requestURL.map(HTTPError.redacted) ?? origin }

  init(id: Int, loop: EventLoop, route: ConnectionRoute, owner: any HTTP1ConnectionOwner) {
    self.id = id
    self.loop = loop
    self.route = route
    self.origin = route.origin
    self.owner = owner
    machine = HTTP1ConnectionStateMachine(
      tunnels: route.tunnelRequest != nil, usesTLS: route.tls != nil)
  }

  deinit {
    connector?.cancel()
    stream?.close()
  }

  // MARK: - What the owner calls

  /// Resolves the route's host and connects (with its tunnel and TLS handshake), within
  /// `timeout` seconds; reports `connectionEstablished` or `connectionFailed`.
  func connect(timeout: Double) {
    guard case .connect = machine.connect() else { return }
    let deadline = Monotonic.deadline(after: timeout)
    connectTimer = loop.schedule(at: deadline) { [weak self] in
      guard let self else { return }
      self.perform(self.machine.establishmentFailed(.timedOut(url: self.origin, after: timeout)))
    }
    let connector = TCPConnector(loop: loop, route: route)
    self.connector = connector
    connector.start(deadline: deadline) { [weak self] result in
      guard let self else { return }
      self.connector = nil
      switch result {
      case .success(let descriptor):
        let stream = PlainByteStream(descriptor: descriptor)
        self.stream = stream
        self.token = self.loop.register(descriptor, self)
        self.perform(self.machine.socketConnected())
      case .failure(let error):
        self.perform(self.machine.establishmentFailed(error))
      }
    }
  }

  /// Sends `message` (a whole request) and hands the answer to `sink`. `url` names the
  /// request in errors; `isHead` says the answer has no body.
  func execute(_ message: [UInt8], url: URL, isHead: Bool, sink: any ExchangeSink) {
    // A kept-alive connection the server closed, or with stray bytes waiting (a late part of
    // an earlier answer would be read as this one's): nothing is sent on it. The socket is
    // asked only before the loop has polled it idle.
    let quiet =
      machine.state != .idle || !machine.isReused
      || (loop.handledPolls >= quietAfterPoll && stream?.bufferedByteCount == 0)
      || stream?.isQuietWhileIdle(scratch: loop.readBuffer) == true
    let action = machine.startExchange(length: message.count, quiet: quiet)
    if case .startExchange = action {
      self.sink = sink
      requestURL = url
      self.message = message
      parser = HTTP1ResponseParser(isHeadRequest: isHead)
      transfer(write: true, read: false)
    } else {
      perform(action)
    }
  }

  /// Reads again after a sink paused the exchange.
  func resumeReading() {
    perform(machine.resumeReading())
  }

  /// Ends the exchange in progress with `error` (the owner's timeout or a cancellation) and
  /// closes the connection; a connection not busy just closes.
  func abort(_ error: HTTPError) {
    perform(machine.abort(error))
  }

  /// Closes the connection without telling the owner (it asked for it).
  func close() {
    perform(machine.close())
  }

  // MARK: - Readiness

  func handleReadiness(readable: Bool, writable: Bool) {
    guard let stream else { return }
    let ready = stream.progress(readable: readable, writable: writable)
    switch machine.readiness(canRead: ready.read, canWrite: ready.write) {
    case .stepTunnel: tunnelStep(readable: readable, writable: writable)
    case let action: perform(action)
    }
  }

  // MARK: - Performing the machine's actions

  private func perform(_ action: HTTP1ConnectionStateMachine.Action) {
    switch action {
    case .none, .connect, .deliverHead, .deliverBody:
      break  // `connect(timeout:)` and `deliver(_:)` perform these.
    case .openTunnel:
      guard let request = route.tunnelRequest else { return }
      tunnel = ProxyTunnel(request: request)
      tunnelStep(readable: false, writable: true)
    case .startHandshake:
      startHandshake()
    case .stepTunnel:
      tunnelStep(readable: true, writable: true)
    case .stepHandshake:
      handshakeStep()
    case .reportEstablished:
      cancelConnectTimer()
      updateInterest()
      owner?.connectionEstablished(self)
    case .failConnecting(let error):
      cancelConnectTimer()
      closeStream()
      owner?.connectionFailed(self, error)
    case .startExchange:
      transfer(write: true, read: false)
    case .refuseExchange:
      closeStream()
      owner?.exchangeNotStarted(self)
    case .transfer(let write, let read):
      transfer(write: write, read: read)
    case .readIdle:
      readIdle()
    case .finishParsing:
      finishParsing()
    case .resumeReading:
      updateInterest()
      // Bytes the stream decrypted already do not make the socket readable: read them now.
      if let stream, stream.bufferedByteCount > 0 {
        loop.execute { [weak self] in
          guard let self, self.machine.isReading else { return }
          self.transfer(write: false, read: true)
        }
      }
    case .finishExchange(let reusable):
      sink = nil
      message = []
      if reusable { quietAfterPoll = loop.polls + 1 }
      if reusable { updateInterest() } else { closeStream() }
      owner?.exchangeFinished(self, reusable: reusable)
    case .failExchange(let failure, let reusedAndSilent):
      let error = failure.httpError(url: url)
      sink = nil
      message = []
      closeStream()
      owner?.exchangeFailed(self, error, reusedAndSilent: reusedAndSilent)
    case .closeIdle:
      closeStream()
      owner?.idleConnectionClosed(self)
    case .close:
      cancelConnectTimer()
      closeStream()
      sink = nil
    }
  }

  // MARK: - Establishment

  /// Takes the `CONNECT` tunnel a step; once the proxy opened it, TLS starts.
  private func tunnelStep(readable: Bool, writable: Bool) {
    guard var tunnel, let stream else { return }
    let outcome = tunnel.step(
      stream, readable: readable, writable: writable, buffer: loop.readBuffer)
    self.tunnel = tunnel
    switch outcome {
    case .pending:
      updateInterest()
    case .open:
      self.tunnel = nil
      perform(machine.tunnelOpened())
    case .failed(let reason):
      self.tunnel = nil
      perform(machine.establishmentFailed(.unreachable(url: origin, reason: reason)))
    }
  }

  private func startHandshake() {
    guard let context = route.tls, let plain = stream as? PlainByteStream else { return }
    do throws(TLSFailure) {
      let secure = try TLSByteStream(over: plain, context: context, host: route.serverName)
      stream = secure
      handshaking = secure
    } catch {
      refusal = error.refusal
      return perform(machine.establishmentFailed(error.httpError(url: origin)))
    }
    handshakeStep()
  }

  private func handshakeStep() {
    guard let handshaking else { return }
    switch handshaking.handshake() {
    case .done:
      self.handshaking = nil
      perform(machine.handshakeDone())
    case .waiting:
      updateInterest()
    case .failed(let failure):
      self.handshaking = nil
      refusal = failure.refusal
      perform(machine.establishmentFailed(failure.httpError(url: origin)))
    }
  }

  private func cancelConnectTimer() {
    loop.cancel(connectTimer)
    connectTimer = nil
  }

  /// Readable while idle: the server closed it (or sent bytes nobody asked for), or, over
  /// TLS, sent session tickets, which leave the connection idle.
  private func readIdle() {
    guard let stream else { return }
    switch stream.read(into: loop.readBuffer) {
    case .wantRead, .wantWrite: updateInterest()
    case .bytes: perform(machine.strayBytesWhileIdle())
    case .closed: perform(machine.streamClosed())
    case .failed(let reason): perform(machine.streamFailed(reason))
    }
  }

  // MARK: - Exchanges

  /// Writes what the stream takes (`write`), reads what it has (`read`), then sets the
  /// socket's interest for what is left.
  private func transfer(write: Bool, read: Bool) {
    if write {
      flush()
      guard machine.exchange != nil else { return }
    }
    if read {
      readAvailable()
      guard machine.exchange != nil else { return }
    }
    updateInterest()
  }

  private func flush() {
    guard let stream else { return }
    while let exchange = machine.exchange, exchange.wantsToWrite {
      let written = exchange.written
      let result = message.withUnsafeBytes {
        stream.write(UnsafeRawBufferPointer(rebasing: $0[written...]))
      }
      switch result {
      case .wrote(let count): machine.wrote(count)
      case .wantRead, .wantWrite: return
      // The server stopped reading (it may have answered early, or closed): stop writing and
      // read what it said; the read reports the end.
      case .failed: machine.writeFailed()
      }
    }
  }

  /// Reads while the stream has bytes, up to its bound per readiness so that one busy
  /// connection does not hold its loop.
  private func readAvailable() {
    guard let stream else { return }
    let buffer = loop.readBuffer
    for _ in 0..<stream.readsPerReadiness {
      switch stream.read(into: buffer) {
      case .bytes(let count):
        machine.bytesReceived()
        let events: [HTTP1ResponseParser.Event]
        do throws(HTTP1ResponseParser.Failure) {
          events = try parser.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        } catch {
          perform(machine.parseFailed(error.reason))
          return
        }
        deliver(events)
        guard machine.isReading else { return }
      case .wantRead, .wantWrite:
        return
      case .closed:
        perform(machine.streamClosed())
        return
      case .failed(let reason):
        perform(machine.streamFailed(reason))
        return
      }
    }
  }

  /// The server ended the connection after part of an answer: a body that runs to the close
  /// ends here; anything else was cut short.
  private func finishParsing() {
    let events: [HTTP1ResponseParser.Event]
    do throws(HTTP1ResponseParser.Failure) {
      events = try parser.finish()
    } catch {
      perform(
        machine.endedInsideAnswer(expected: parser.expectedLength, received: parser.received))
      return
    }
    deliver(events)
  }

  private func deliver(_ events: [HTTP1ResponseParser.Event]) {
    for event in events {
      guard let sink else { return }
      switch event {
      case .head(let status, let headers):
        guard case .deliverHead = machine.receivedHead() else { return }
        if let error = sink.receiveHead(status: status, headers: headers) {
          perform(machine.sinkRefused(error))
          return
        }
      case .body(let piece):
        guard !piece.isEmpty else { continue }
        guard case .deliverBody = machine.receivedBody() else { return }
        switch sink.receiveBody(piece) {
        case .proceed: break
        case .pause: machine.pauseReading()
        case .abort(let error):
          perform(machine.sinkRefused(error))
          return
        }
      case .end:
        perform(machine.receivedEnd(keepAlive: parser.keepAlive && !parser.hasTrailingBytes))
        return
      }
    }
  }

  // MARK: - The socket

  private func updateInterest() {
    guard let stream else { return }
    let wants = machine.interest
    var interest = stream.interest(reading: wants.reading, writing: wants.writing)
    if let tunnel, tunnel.wantsToWrite { interest.write = true }
    loop.setInterest(stream.descriptor, token: token, read: interest.read, write: interest.write)
  }

  private func closeStream() {
    connector?.cancel()
    connector = nil
    tunnel = nil
    handshaking = nil
    guard let stream else { return }
    self.stream = nil
    loop.deregister(stream.descriptor, token: token)
    stream.close()
  }
}
