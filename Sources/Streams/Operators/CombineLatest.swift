extension Publisher {
  /// Publishes a tuple of the latest values of this publisher and `other` whenever either
  /// produces a value, once both have produced one.
  ///
  /// Demand from the subscriber is passed to both upstreams, as in Combine. A value that
  /// arrives while the subscriber has no demand still becomes the latest value of its
  /// upstream, but produces no tuple; the next value after the subscriber asks again does.
  /// The publisher finishes when both upstreams have finished (even if one never produced a
  /// value), and fails as soon as either fails, cancelling the other.
  ///
  /// ```swift
  /// username.combineLatest(password).sink { user, password in validate(user, password) }
  /// ```
  public func combineLatest<P: Publisher>(_ other: P) -> Publishers.CombineLatest<Self, P>
  where P.Failure == Failure {
    Publishers.CombineLatest(self, other)
  }

  /// Publishes a tuple of the latest values of this publisher and two others whenever any of
  /// them produces a value, once all have produced one.
  public func combineLatest<P: Publisher, Q: Publisher>(
    _ publisher1: P, _ publisher2: Q
  ) -> Publishers.CombineLatest3<Self, P, Q> where P.Failure == Failure, Q.Failure == Failure {
    Publishers.CombineLatest3(self, publisher1, publisher2)
  }

  /// Publishes a tuple of the latest values of this publisher and three others whenever any
  /// of them produces a value, once all have produced one.
  ///
  /// Demand, completion and failure work as for two publishers: demand goes to all four
  /// upstreams, the result finishes when all four have finished, and the first failure is
  /// forwarded at once and cancels the other three.
  public func combineLatest<P: Publisher, Q: Publisher, R: Publisher>(
    _ publisher1: P, _ publisher2: Q, _ publisher3: R
  ) -> Publishers.CombineLatest4<Self, P, Q, R>
  where P.Failure == Failure, Q.Failure == Failure, R.Failure == Failure {
    Publishers.CombineLatest4(self, publisher1, publisher2, publisher3)
  }
}

extension Publisher {
  /// Publishes `transform` applied to the latest values of this publisher and `other`
  /// whenever either produces a value, once both have produced one.
  ///
  /// ```swift
  /// width.combineLatest(height) { $0 * $1 }.sink { print("area", $0) }
  /// ```
  public func combineLatest<P: Publisher, T>(
    _ other: P, _ transform: @escaping @Sendable (Output, P.Output) -> T
  ) -> Publishers.Map<Publishers.CombineLatest<Self, P>, T> where P.Failure == Failure {
    combineLatest(other).map { transform($0.0, $0.1) }
  }

  /// Publishes `transform` applied to the latest values of this publisher and two others
  /// whenever any of them produces a value, once all have produced one.
  public func combineLatest<P: Publisher, Q: Publisher, T>(
    _ publisher1: P, _ publisher2: Q,
    _ transform: @escaping @Sendable (Output, P.Output, Q.Output) -> T
  ) -> Publishers.Map<Publishers.CombineLatest3<Self, P, Q>, T>
  where P.Failure == Failure, Q.Failure == Failure {
    combineLatest(publisher1, publisher2).map { transform($0.0, $0.1, $0.2) }
  }

  /// Publishes `transform` applied to the latest values of this publisher and three others
  /// whenever any of them produces a value, once all have produced one.
  ///
  /// ```swift
  /// host.combineLatest(port, user, token) { Endpoint($0, $1, $2, $3) }
  /// ```
  public func combineLatest<P: Publisher, Q: Publisher, R: Publisher, T>(
    _ publisher1: P, _ publisher2: Q, _ publisher3: R,
    _ transform: @escaping @Sendable (Output, P.Output, Q.Output, R.Output) -> T
  ) -> Publishers.Map<Publishers.CombineLatest4<Self, P, Q, R>, T>
  where P.Failure == Failure, Q.Failure == Failure, R.Failure == Failure {
    combineLatest(publisher1, publisher2, publisher3).map { transform($0.0, $0.1, $0.2, $0.3) }
  }
}

extension Publishers {
  /// A publisher that publishes the latest values of two upstreams together.
  public struct CombineLatest<A: Publisher, B: Publisher>: Publisher
  where A.Failure == B.Failure {
    /// The kind of values published: a tuple of the upstreams' latest values.
    public typealias Output = (A.Output, B.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B

    /// Creates a publisher that combines the latest values of `a` and `b`.
    public init(_ a: A, _ b: B) {
      self.a = a
      self.b = b
    }

    /// Attaches the subscriber, then subscribes to both upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let core = CombineLatestCore(subscriber, count: 2) {
        ($0[0] as! A.Output, $0[1] as! B.Output)
      }
      core.start()
      a.subscribe(core.subscriber(forSide: 0))
      b.subscribe(core.subscriber(forSide: 1))
    }
  }

  /// A publisher that publishes the latest values of three upstreams together.
  public struct CombineLatest3<A: Publisher, B: Publisher, C: Publisher>: Publisher
  where A.Failure == B.Failure, B.Failure == C.Failure {
    /// The kind of values published: a tuple of the upstreams' latest values.
    public typealias Output = (A.Output, B.Output, C.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B
    /// The third upstream publisher.
    public let c: C

    /// Creates a publisher that combines the latest values of `a`, `b` and `c`.
    public init(_ a: A, _ b: B, _ c: C) {
      self.a = a
      self.b = b
      self.c = c
    }

    /// Attaches the subscriber, then subscribes to the three upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let core = CombineLatestCore(subscriber, count: 3) {
        ($0[0] as! A.Output, $0[1] as! B.Output, $0[2] as! C.Output)
      }
      core.start()
      a.subscribe(core.subscriber(forSide: 0))
      b.subscribe(core.subscriber(forSide: 1))
      c.subscribe(core.subscriber(forSide: 2))
    }
  }

  /// A publisher that publishes the latest values of four upstreams together.
  public struct CombineLatest4<A: Publisher, B: Publisher, C: Publisher, D: Publisher>: Publisher
  where A.Failure == B.Failure, B.Failure == C.Failure, C.Failure == D.Failure {
    /// The kind of values published: a tuple of the upstreams' latest values.
    public typealias Output = (A.Output, B.Output, C.Output, D.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B
    /// The third upstream publisher.
    public let c: C
    /// The fourth upstream publisher.
    public let d: D

    /// Creates a publisher that combines the latest values of `a`, `b`, `c` and `d`.
    public init(_ a: A, _ b: B, _ c: C, _ d: D) {
      self.a = a
      self.b = b
      self.c = c
      self.d = d
    }

    /// Attaches the subscriber, then subscribes to the four upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let core = CombineLatestCore(subscriber, count: 4) {
        ($0[0] as! A.Output, $0[1] as! B.Output, $0[2] as! C.Output, $0[3] as! D.Output)
      }
      core.start()
      a.subscribe(core.subscriber(forSide: 0))
      b.subscribe(core.subscriber(forSide: 1))
      c.subscribe(core.subscriber(forSide: 2))
      d.subscribe(core.subscriber(forSide: 3))
    }
  }
}

/// Keeps the latest value of each upstream and delivers their combination.
///
/// Values are kept as `Any` so that one core serves every arity; `combine` turns the full set
/// back into the typed tuple, and only ever sees values of the types the sides put in.
@usableFromInline
final class CombineLatestCore<Downstream: Subscriber>: Subscription, FanInCore {
  @usableFromInline typealias Failure = Downstream.Failure

  @usableFromInline
  struct Side {
    @usableFromInline var subscription: (any Subscription)?
    @usableFromInline var latest: Any?
    @usableFromInline var isFinished = false

    @inlinable init() {}
  }

  @usableFromInline
  struct State {
    @usableFromInline var sides: [Side]
    @usableFromInline var demand = Subscribers.Demand.none
    /// Everything the subscriber requested so far, for an upstream that subscribes late.
    @usableFromInline var requested = Subscribers.Demand.none
    @usableFromInline var isTerminal = false

    @inlinable init(sides: [Side]) { self.sides = sides }

    @inlinable var subscriptions: [any Subscription] { sides.compactMap { $0.subscription } }
  }

  @usableFromInline let downstream: SerializedDownstream<Downstream>
  @usableFromInline let state: Locked<State>
  @usableFromInline let combine: @Sendable ([Any]) -> Downstream.Input

  @inlinable
  init(
    _ downstream: Downstream, count: Int, combine: @escaping @Sendable ([Any]) -> Downstream.Input
  ) {
    self.downstream = SerializedDownstream(downstream)
    state = Locked(State(sides: Array(repeating: Side(), count: count)))
    self.combine = combine
  }

  @inlinable
  func start() {
    addDemand(downstream.send(.subscription(self)))
  }

  @inlinable
  func side(_ index: Int, received subscription: any Subscription) {
    let requested = state.withLock { state -> Subscribers.Demand? in
      guard !state.isTerminal, state.sides[index].subscription == nil else { return nil }
      state.sides[index].subscription = subscription
      return state.requested
    }
    guard let requested else {
      subscription.cancel()
      return
    }
    if requested > .none { subscription.request(requested) }
  }

  @inlinable
  func side<Value>(_ index: Int, received value: Value) {
    let value: Any = value  // boxed before taking the lock
    let deliver = state.withLock { state -> Bool in
      guard !state.isTerminal else { return false }
      state.sides[index].latest = value
      return emitLocked(&state)
    }
    if deliver { addDemand(downstream.deliver()) }
  }

  @inlinable
  func side(_ index: Int, completedWith completion: Subscribers.Completion<Failure>) {
    let (deliver, others) = state.withLock { state -> (Bool, [any Subscription]) in
      guard !state.isTerminal else { return (false, []) }
      state.sides[index].subscription = nil
      state.sides[index].isFinished = true
      if case .failure = completion {
        state.isTerminal = true
        defer { state.sides = [] }
        return (downstream.enqueue(.completion(completion)), state.subscriptions)
      }
      return (finishLocked(&state), [])
    }
    for other in others { other.cancel() }
    if deliver { _ = downstream.deliver() }
  }

  @inlinable
  func request(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    let subscriptions = state.withLock { state -> [any Subscription] in
      guard !state.isTerminal else { return [] }
      state.demand += demand
      state.requested += demand
      return state.subscriptions
    }
    for subscription in subscriptions { subscription.request(demand) }
  }

  @inlinable
  func cancel() {
    let subscriptions = state.withLock { state -> [any Subscription] in
      guard !state.isTerminal else { return [] }
      state.isTerminal = true
      defer { state.sides = [] }
      return state.subscriptions
    }
    downstream.cancel()
    for subscription in subscriptions { subscription.cancel() }
  }

  @inlinable
  func addDemand(_ demand: Subscribers.Demand) {
    request(demand)
  }

  /// Queues the current combination if every side has a value and the subscriber has
  /// demand; without demand the combination is dropped, as Combine does.
  @inlinable
  func emitLocked(_ state: inout State) -> Bool {
    let values = state.sides.compactMap { $0.latest }
    guard values.count == state.sides.count, state.demand > .none else { return false }
    state.demand -= 1
    return downstream.enqueue(.value(combine(values)))
  }

  @inlinable
  func finishLocked(_ state: inout State) -> Bool {
    guard !state.isTerminal, state.sides.allSatisfy({ $0.isFinished }) else { return false }
    state.isTerminal = true
    state.sides = []
    return downstream.enqueue(.completion(.finished))
  }
}
