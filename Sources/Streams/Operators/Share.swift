import TetherSupport

extension Publisher {
  /// Shares one subscription to this publisher among every subscriber of the result.
  ///
  /// The first subscriber connects the shared publisher to the upstream; later subscribers
  /// join it and see only the values sent after they joined (like a `PassthroughSubject`,
  /// a value is dropped for a subscriber without demand). When the last subscriber cancels,
  /// the upstream subscription is cancelled, and the next subscriber connects again. After
  /// the upstream completes, new subscribers receive the completion at once. `share()`
  /// returns a class: keep and subscribe to the same instance.
  ///
  /// ```swift
  /// let profile = loadProfile().share()
  /// profile.map(\.name).sink { print($0) }.store(in: &cancellables)
  /// profile.map(\.avatar).sink { show($0) }.store(in: &cancellables)
  /// ```
  public func share() -> Publishers.Share<Self> {
    Publishers.Share(upstream: self)
  }
}

extension Publishers {
  /// A publisher that shares one upstream subscription among all its subscribers.
  ///
  /// `Share` is a class, so copies of it share the connection.
  public final class Share<Upstream: Publisher>: Publisher, Equatable {
    /// The kind of values published: the upstream's.
    public typealias Output = Upstream.Output
    /// The kind of errors published: the upstream's.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream

    private let subject = PassthroughSubject<Output, Failure>()
    private let connection = ShareConnection()

    /// Creates a publisher that shares `upstream`.
    public init(upstream: Upstream) {
      self.upstream = upstream
    }

    /// Attaches the subscriber to the shared stream, connecting to the upstream if it is the
    /// first.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let generation = connection.subscriberArrived()
      subject.subscribe(ShareInner(subscriber, connection: connection))
      if let generation {
        upstream.subscribe(
          ShareUpstream(subject: subject, connection: connection, generation: generation))
      }
    }

    /// Two shares are equal when they are the same instance.
    public static func == (lhs: Share, rhs: Share) -> Bool { lhs === rhs }
  }
}

extension Publishers.Share: Sendable where Upstream: Sendable, Upstream.Output: Sendable {}

/// The reference count and upstream subscription of a share.
private final class ShareConnection: Sendable {
  private struct State {
    var subscriberCount = 0
    var isConnected = false
    var isCompleted = false
    /// Counts connections, so a late subscription of a dropped connection is cancelled.
    var generation: UInt64 = 0
    var upstream: (any Subscription)?
  }

  private let state = Lock(unchecked: State())

  /// Counts a new subscriber; returns the generation of a new connection if this subscriber
  /// must connect the upstream.
  func subscriberArrived() -> UInt64? {
    state.withLockUnchecked { state in
      state.subscriberCount += 1
      guard !state.isConnected, !state.isCompleted else { return nil }
      state.isConnected = true
      state.generation += 1
      return state.generation
    }
  }

  /// Keeps the upstream subscription of connection `generation`, unless it was dropped.
  func connected(_ subscription: any Subscription, generation: UInt64) -> Bool {
    state.withLockUnchecked { state in
      guard state.isConnected, state.generation == generation else { return false }
      state.upstream = subscription
      return true
    }
  }

  func upstreamCompleted(generation: UInt64) {
    state.withLockUnchecked { state in
      guard state.generation == generation else { return }
      state.isCompleted = true
      state.upstream = nil
    }
  }

  /// Counts a cancelled subscriber; the last one disconnects the upstream.
  func subscriberCancelled() {
    let upstream = state.withLockUnchecked { state -> (any Subscription)? in
      state.subscriberCount -= 1
      guard state.subscriberCount == 0, state.isConnected, !state.isCompleted else {
        return nil
      }
      state.isConnected = false
      defer { state.upstream = nil }
      return state.upstream
    }
    upstream?.cancel()
  }
}

/// The share's subscription to its upstream: republishes everything into the subject.
private final class ShareUpstream<Output, Failure: Error>: Subscriber {
  typealias Input = Output

  private let subject: PassthroughSubject<Output, Failure>
  private let connection: ShareConnection
  private let generation: UInt64

  init(
    subject: PassthroughSubject<Output, Failure>, connection: ShareConnection,
    generation: UInt64
  ) {
    self.subject = subject
    self.connection = connection
    self.generation = generation
  }

  func receive(subscription: any Subscription) {
    if connection.connected(subscription, generation: generation) {
      subscription.request(.unlimited)
    } else {
      subscription.cancel()
    }
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    subject.send(input)
    return .none
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    connection.upstreamCompleted(generation: generation)
    subject.send(completion: completion)
  }
}

/// One subscriber's subscription to a share: forwards the subject's events and tells the
/// share when the subscriber cancels.
private final class ShareInner<Downstream: Subscriber>: Subscriber, Subscription {
  typealias Input = Downstream.Input
  typealias Failure = Downstream.Failure

  private let downstream: SerializedDownstream<Downstream>
  private let link = UpstreamLink()
  private let connection: ShareConnection

  init(_ downstream: Downstream, connection: ShareConnection) {
    self.downstream = SerializedDownstream(downstream)
    self.connection = connection
  }

  func receive(subscription: any Subscription) {
    guard link.attach(subscription) else { return }
    let demand = downstream.send(.subscription(self))
    if demand > .none { subscription.request(demand) }
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    downstream.send(.value(input))
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    guard link.finish() else { return }
    downstream.send(.completion(completion))
  }

  func request(_ demand: Subscribers.Demand) {
    link.request(demand)
  }

  func cancel() {
    guard case .some(let subscription) = link.take() else { return }
    downstream.cancel()
    subscription?.cancel()
    connection.subscriberCancelled()
  }
}
