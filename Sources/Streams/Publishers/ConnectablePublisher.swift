import TetherSupport

/// A publisher that starts producing only when told to connect, so that several subscribers
/// can attach first.
///
/// `Timer.publish(every:tolerance:on:in:options:)` returns one. Call `connect()` yourself,
/// or use `autoconnect()` to connect with the first subscriber.
public protocol ConnectablePublisher<Output, Failure>: Publisher {
  /// Starts the publisher; cancelling the result stops it.
  func connect() -> any Cancellable
}

extension ConnectablePublisher {
  /// Connects when the first subscriber attaches, and disconnects when the last one cancels
  /// or completes.
  ///
  /// ```swift
  /// Timer.publish(every: 1, on: .main, in: .common).autoconnect().sink { tick($0) }
  /// ```
  public func autoconnect() -> Publishers.Autoconnect<Self> {
    Publishers.Autoconnect(upstream: self)
  }
}

extension Publishers {
  /// A publisher that connects its connectable upstream while it has subscribers.
  public final class Autoconnect<Upstream: ConnectablePublisher>: Publisher {
    /// Autoconnect publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// Autoconnect fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The connectable publisher this publisher connects.
    public let upstream: Upstream
    private let connection = AutoconnectCount()

    /// Creates a publisher that connects `upstream` while it has subscribers.
    public init(upstream: Upstream) {
      self.upstream = upstream
    }

    /// Attaches the subscriber, and connects the upstream if it is the first one.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let connection = connection
      let isFirst = connection.retain()
      upstream.handleEvents(
        receiveCompletion: { _ in connection.release() }, receiveCancel: { connection.release() }
      ).subscribe(subscriber)
      if isFirst { connection.keep(upstream.connect()) }
    }
  }
}

/// Counts an `Autoconnect`'s subscribers and holds its upstream's connection while there are
/// any.
final class AutoconnectCount: Sendable {
  private struct State {
    var subscribers = 0
    var connection: (any Cancellable)?
  }

  private let state = Lock(unchecked: State())

  /// Counts a subscriber; `true` for the first one, which must connect.
  func retain() -> Bool {
    state.withLockUnchecked { state in
      state.subscribers += 1
      return state.subscribers == 1 && state.connection == nil
    }
  }

  /// Keeps the connection, or cancels it if every subscriber already left.
  func keep(_ connection: any Cancellable) {
    let live = state.withLockUnchecked { state -> Bool in
      guard state.subscribers > 0 else { return false }
      state.connection = connection
      return true
    }
    if !live { connection.cancel() }
  }

  /// A subscriber left; the last one disconnects.
  func release() {
    let connection = state.withLockUnchecked { state -> (any Cancellable)? in
      state.subscribers = Swift.max(0, state.subscribers - 1)
      guard state.subscribers == 0 else { return nil }
      defer { state.connection = nil }
      return state.connection
    }
    connection?.cancel()
  }
}
