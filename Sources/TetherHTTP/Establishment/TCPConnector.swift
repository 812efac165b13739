import Foundation
import TetherSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens the TCP connection of a route's first hop (the origin, or the proxy): resolves the
/// host, then connects with Happy Eyeballs. This is the connection's one seam with
/// establishment: ``HTTP1Connection`` starts it, arms its own timer over the whole of
/// establishment (connect, tunnel, handshake), and takes over the descriptor it reports.
///
/// It is the small, dumb driver of ``HappyEyeballsStateMachine``: each attempt is a
/// non-blocking socket registered with the loop; timers are the loop's.
///
/// ```swift
/// let connector = TCPConnector(loop: loop, route: route)
/// connector.start(deadline: deadline) { result in
///   switch result {
///   case .success(let descriptor): // connected, non-blocking, not registered with the loop
///   case .failure(let error): // .unreachable naming the route's origin
///   }
/// }
/// ```
///
/// `completion` runs on the loop, at most once, and never after ``cancel()``, which closes
/// every socket the connector opened. Confined to its loop: every method is called on the
/// loop's thread.
final class TCPConnector: @unchecked Sendable {
  // @unchecked Sendable: every mutable property is touched only on `loop`'s thread; the one
  // hop from another thread (the resolver's answer) goes through `loop.execute`.
  typealias Completion = (Result<Int32, HTTPError>) -> Void

  let loop: EventLoop
  let route: ConnectionRoute
  private let resolver: Resolver
  private let attemptDelay: Duration
  private var machine = HappyEyeballsStateMachine(connectTimeout: .zero)
  private var completion: Completion?
  private var attempts: [Int: ConnectAttempt] = [:]
  private var timers: [HappyEyeballsStateMachine.Timer: TimerID] = [:]

  /// A connector for `route`'s first hop; `resolver` finds its addresses (a test passes one
  /// with a fixed answer).
  init(
    loop: EventLoop, route: ConnectionRoute, resolver: Resolver = .shared,
    attemptDelay: Duration = HappyEyeballsStateMachine.defaultAttemptDelay
  ) {
    self.loop = loop
    self.route = route
    self.resolver = resolver
    self.attemptDelay = attemptDelay
  }

  deinit {
    for attempt in attempts.values { attempt.close() }
  }

  /// Resolves and connects; `completion` gets the connected descriptor or the reason none
  /// connected. `deadline` (monotonic nanoseconds) is when the caller gives up: the caller's
  /// own timer enforces it and calls ``cancel()``; each address but the last gets a share of
  /// the time until then.
  func start(deadline: UInt64, completion: @escaping Completion) {
    let now = Monotonic.now
    let left = deadline > now ? deadline - now : 0
    machine = HappyEyeballsStateMachine(
      connectTimeout: .nanoseconds(Int64(clamping: left)), attemptDelay: attemptDelay)
    self.completion = completion
    perform(machine.start())
  }

  /// Stops connecting and closes every socket in progress; the completion is not called.
  func cancel() {
    completion = nil
    perform(machine.cancel())
  }

  // MARK: - Performing the machine's actions

  private func perform(_ actions: [HappyEyeballsStateMachine.Action]) {
    for action in actions {
      switch action {
      case .resolve:
        resolver.resolve(route.host, port: route.port) { [weak self, loop] result in
          let addresses = try? result.get()
          let connector = self
          if loop.inLoop {
            connector?.resolved(addresses)
          } else {
            loop.execute { connector?.resolved(addresses) }
          }
        }
      case .startAttempt(let id, let address):
        startAttempt(id, address)
      case .startTimer(let timer, let delay):
        loop.cancel(timers[timer])
        timers[timer] = loop.schedule(at: Monotonic.deadline(after: delay.seconds)) {
          [weak self] in
          guard let self else { return }
          self.timers[timer] = nil
          self.perform(self.machine.timerFired(timer))
        }
      case .cancelTimer(let timer):
        loop.cancel(timers.removeValue(forKey: timer))
      case .closeAttempt(let id):
        attempts.removeValue(forKey: id)?.close()
      case .succeed(let id):
        guard let attempt = attempts.removeValue(forKey: id) else { continue }
        let descriptor = attempt.release()
        report(.success(descriptor))
      case .fail(.hostNotFound):
        let reason = route.host == route.serverName ? "host not found" : "proxy host not found"
        report(.failure(.unreachable(url: route.origin, reason: reason)))
      case .fail(.unreachable(let reason)):
        report(.failure(.unreachable(url: route.origin, reason: reason)))
      }
    }
  }

  private func resolved(_ addresses: [SocketAddress]?) {
    perform(machine.resolved(addresses))
  }

  private func report(_ result: Result<Int32, HTTPError>) {
    for timer in timers.values { loop.cancel(timer) }
    timers = [:]
    guard let completion else {
      if case .success(let descriptor) = result { closeDescriptor(descriptor) }
      return
    }
    self.completion = nil
    completion(result)
  }

  private func startAttempt(_ id: Int, _ address: SocketAddress) {
    let descriptor = socket(address.family, socketStreamType, 0)
    guard descriptor >= 0 else {
      let reason = String(cString: strerror(errno))
      // Reported from the next turn of the loop: the machine is between two actions now.
      loop.execute { [weak self] in self?.attemptEnded(id, error: nil, reason: reason) }
      return
    }
    Self.configure(descriptor)
    let attempt = ConnectAttempt(id: id, descriptor: descriptor, connector: self)
    attempts[id] = attempt
    let result = address.withSockaddr { Foundation.connect(descriptor, $0, $1) }
    let error = result == 0 ? 0 : errno
    if error == EINPROGRESS {
      attempt.register(on: loop)
      return
    }
    loop.execute { [weak self] in self?.attemptEnded(id, error: error, reason: nil) }
  }

  /// An attempt's connect finished with `error` (0: connected), or failed for `reason`.
  fileprivate func attemptEnded(_ id: Int, error: Int32?, reason: String?) {
    if error == 0 {
      perform(machine.attemptConnected(id))
    } else {
      let words =
        reason
        ?? (error == ECONNREFUSED ? "connection refused" : String(cString: strerror(error ?? 0)))
      perform(machine.attemptFailed(id, reason: words))
    }
  }

  /// Non-blocking, close-on-exec, no Nagle delay (and no SIGPIPE where a socket option says so).
  private static func configure(_ descriptor: Int32) {
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    var one: Int32 = 1
    _ = setsockopt(
      descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    #if canImport(Darwin)
    _ = setsockopt(
      descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    #endif
  }
}

/// One connect attempt's socket, registered with the loop while its connect is in progress.
private final class ConnectAttempt: EventLoopHandler {
  let id: Int
  private var descriptor: Int32
  private var loop: EventLoop?
  private var token: UInt64 = 0
  private weak var connector: TCPConnector?

  init(id: Int, descriptor: Int32, connector: TCPConnector) {
    self.id = id
    self.descriptor = descriptor
    self.connector = connector
  }

  func register(on loop: EventLoop) {
    self.loop = loop
    token = loop.register(descriptor, self)
    loop.setInterest(descriptor, token: token, read: false, write: true)
  }

  func handleReadiness(readable: Bool, writable: Bool) {
    guard descriptor >= 0, readable || writable else { return }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
    if error == EINPROGRESS || error == EALREADY { return }
    // No more readiness for this attempt: the machine decides what happens to the socket.
    unregister()
    connector?.attemptEnded(id, error: error, reason: nil)
  }

  /// Hands the descriptor over (unregistered); the attempt no longer closes it.
  func release() -> Int32 {
    unregister()
    defer { descriptor = -1 }
    return descriptor
  }

  func close() {
    unregister()
    guard descriptor >= 0 else { return }
    closeDescriptor(descriptor)
    descriptor = -1
  }

  private func unregister() {
    guard let loop, descriptor >= 0 else { return }
    loop.deregister(descriptor, token: token)
    self.loop = nil
  }
}
