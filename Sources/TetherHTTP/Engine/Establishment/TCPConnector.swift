import Foundation
import TetherSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves a host and connects a TCP socket to it: the small, dumb driver of
/// ``HappyEyeballsStateMachine``. Each attempt is a non-blocking socket registered with the
/// connector's ``EventLoop``; timers are the loop's. What comes next on the socket (a proxy
/// tunnel, the TLS handshake) is the connection's business.
///
/// It reports once through `completion`, on the loop: the connected descriptor (non-blocking,
/// close-on-exec, `TCP_NODELAY`, no longer registered with the loop; the caller owns it), or
/// the failure. After ``cancel()`` it reports nothing and every socket it opened is closed.
///
/// Confined to its loop: ``start()`` and ``cancel()`` are called on the loop's thread.
final class TCPConnector: @unchecked Sendable {
  // @unchecked Sendable: every mutable property is touched only on `loop`'s thread; the one
  // hop from another thread (the resolver's answer) goes through `loop.execute`.
  typealias Completion = (Result<Int32, HappyEyeballsStateMachine.Failure>) -> Void

  let loop: EventLoop
  let host: String
  let port: Int
  private let resolver: Resolver
  private var machine: HappyEyeballsStateMachine
  private var completion: Completion?
  private var attempts: [Int: ConnectAttempt] = [:]
  private var timers: [HappyEyeballsStateMachine.Timer: TimerID] = [:]

  init(
    loop: EventLoop, host: String, port: Int, connectTimeout: Double,
    attemptDelay: Duration = HappyEyeballsStateMachine.defaultAttemptDelay,
    resolver: Resolver = .shared, completion: @escaping Completion
  ) {
    self.loop = loop
    self.host = host
    self.port = port
    self.resolver = resolver
    self.completion = completion
    let timeout = connectTimeout.isFinite ? max(0, min(connectTimeout, 1e9)) : 1e9
    machine = HappyEyeballsStateMachine(
      connectTimeout: .milliseconds(Int64(timeout * 1000)), attemptDelay: attemptDelay)
  }

  deinit {
    for attempt in attempts.values { attempt.close() }
  }

  /// Resolves and connects.
  func start() {
    perform(machine.start())
  }

  /// Gives up: closes every attempt and reports nothing.
  func cancel() {
    completion = nil
    perform(machine.cancel())
  }

  // MARK: - Performing the machine's actions

  private func perform(_ actions: [HappyEyeballsStateMachine.Action]) {
    for action in actions {
      switch action {
      case .resolve:
        resolver.resolve(host, port: port) { [weak self, loop] result in
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
      case .fail(let failure):
        report(.failure(failure))
      }
    }
  }

  private func resolved(_ addresses: [SocketAddress]?) {
    perform(machine.resolved(addresses))
  }

  private func report(_ result: Result<Int32, HappyEyeballsStateMachine.Failure>) {
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
