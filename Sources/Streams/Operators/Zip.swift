extension Publisher {
  /// Publishes pairs of values: the n-th value of this publisher with the n-th value of
  /// `other`.
  ///
  /// Demand from the subscriber goes to both upstreams; a value waits in a buffer until its
  /// partner arrives. The publisher finishes once an upstream has finished and every value it
  /// sent has been paired (no further pair is possible), cancelling the other upstream; it
  /// fails as soon as either fails.
  ///
  /// ```swift
  /// requests.zip(responses).sink { request, response in log(request, response) }
  /// ```
  public func zip<P: Publisher>(_ other: P) -> Publishers.Zip<Self, P>
  where P.Failure == Failure {
    Publishers.Zip(self, other)
  }

  /// Publishes triples of values: the n-th value of this publisher and of two others.
  public func zip<P: Publisher, Q: Publisher>(
    _ publisher1: P, _ publisher2: Q
  ) -> Publishers.Zip3<Self, P, Q> where P.Failure == Failure, Q.Failure == Failure {
    Publishers.Zip3(self, publisher1, publisher2)
  }

  /// Publishes quadruples of values: the n-th value of this publisher and of three others.
  ///
  /// Demand, completion and failure work as for two publishers: demand goes to all four
  /// upstreams, the result finishes once a finished upstream has nothing left to pair
  /// (cancelling the others), and the first failure is forwarded at once and cancels the other
  /// three.
  public func zip<P: Publisher, Q: Publisher, R: Publisher>(
    _ publisher1: P, _ publisher2: Q, _ publisher3: R
  ) -> Publishers.Zip4<Self, P, Q, R>
  where P.Failure == Failure, Q.Failure == Failure, R.Failure == Failure {
    Publishers.Zip4(self, publisher1, publisher2, publisher3)
  }
}

extension Publisher {
  /// Publishes `transform` applied to the n-th value of this publisher and of `other`.
  ///
  /// ```swift
  /// lefts.zip(rights) { $0 + $1 }.sink { print($0) }
  /// ```
  public func zip<P: Publisher, T>(
    _ other: P, _ transform: @escaping @Sendable (Output, P.Output) -> T
  ) -> Publishers.Map<Publishers.Zip<Self, P>, T> where P.Failure == Failure {
    zip(other).map { transform($0.0, $0.1) }
  }

  /// Publishes `transform` applied to the n-th value of this publisher and of two others.
  public func zip<P: Publisher, Q: Publisher, T>(
    _ publisher1: P, _ publisher2: Q,
    _ transform: @escaping @Sendable (Output, P.Output, Q.Output) -> T
  ) -> Publishers.Map<Publishers.Zip3<Self, P, Q>, T>
  where P.Failure == Failure, Q.Failure == Failure {
    zip(publisher1, publisher2).map { transform($0.0, $0.1, $0.2) }
  }

  /// Publishes `transform` applied to the n-th value of this publisher and of three others.
  ///
  /// ```swift
  /// reads.zip(parses, checks, writes) { Stage($0, $1, $2, $3) }
  /// ```
  public func zip<P: Publisher, Q: Publisher, R: Publisher, T>(
    _ publisher1: P, _ publisher2: Q, _ publisher3: R,
    _ transform: @escaping @Sendable (Output, P.Output, Q.Output, R.Output) -> T
  ) -> Publishers.Map<Publishers.Zip4<Self, P, Q, R>, T>
  where P.Failure == Failure, Q.Failure == Failure, R.Failure == Failure {
    zip(publisher1, publisher2, publisher3).map { transform($0.0, $0.1, $0.2, $0.3) }
  }
}

extension Publishers {
  /// A publisher that pairs the values of two upstreams in order.
  public struct Zip<A: Publisher, B: Publisher>: Publisher where A.Failure == B.Failure {
    /// The kind of values published: a tuple of one value from each upstream.
    public typealias Output = (A.Output, B.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B

    /// Creates a publisher that zips `a` and `b`.
    public init(_ a: A, _ b: B) {
      self.a = a
      self.b = b
    }

    /// Attaches the subscriber, then subscribes to both upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let core = ZipCore(subscriber, count: 2) { ($0[0] as! A.Output, $0[1] as! B.Output) }
      core.start()
      a.subscribe(core.subscriber(forSide: 0))
      b.subscribe(core.subscriber(forSide: 1))
    }
  }

  /// A publisher that groups the values of three upstreams in order.
  public struct Zip3<A: Publisher, B: Publisher, C: Publisher>: Publisher
  where A.Failure == B.Failure, B.Failure == C.Failure {
    /// The kind of values published: a tuple of one value from each upstream.
    public typealias Output = (A.Output, B.Output, C.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B
    /// The third upstream publisher.
    public let c: C

    /// Creates a publisher that zips `a`, `b` and `c`.
    public init(_ a: A, _ b: B, _ c: C) {
      self.a = a
      self.b = b
      self.c = c
    }

    /// Attaches the subscriber, then subscribes to the three upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let core = ZipCore(subscriber, count: 3) {
        ($0[0] as! A.Output, $0[1] as! B.Output, $0[2] as! C.Output)
      }
      core.start()
      a.subscribe(core.subscriber(forSide: 0))
      b.subscribe(core.subscriber(forSide: 1))
      c.subscribe(core.subscriber(forSide: 2))
    }
  }

  /// A publisher that groups the values of four upstreams in order.
  public struct Zip4<A: Publisher, B: Publisher, C: Publisher, D: Publisher>: Publisher
  where A.Failure == B.Failure, B.Failure == C.Failure, C.Failure == D.Failure {
    /// The kind of values published: a tuple of one value from each upstream.
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

    /// Creates a publisher that zips `a`, `b`, `c` and `d`.
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
      let core = ZipCore(subscriber, count: 4) {
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

/// Buffers each upstream's values and delivers them grouped by position.
///
/// Values are kept as `Any` so that one core serves every arity; `combine` turns one value
/// from each side back into the typed tuple.
@usableFromInline
final class ZipCore<Downstream: Subscriber>: Subscription, FanInCore {
  @usableFromInline typealias Failure = Downstream.Failure

  @usableFromInline
  struct Side {
    @usableFromInline var subscription: (any Subscription)?
    @usableFromInline var buffer: [Any] = []
    @usableFromInline var isFinished = false

    @inlinable init() {}
  }

  @usableFromInline
  struct State {
    @usableFromInline var sides: [Side]
    @usableFromInline var demand = Subscribers.Demand.none
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
    let demand = state.withLock { state -> Subscribers.Demand? in
      guard !state.isTerminal, state.sides[index].subscription == nil else { return nil }
      state.sides[index].subscription = subscription
      return state.demand
    }
    guard let demand else {
      subscription.cancel()
      return
    }
    if demand > .none { subscription.request(demand) }
  }

  @inlinable
  func side<Value>(_ index: Int, received value: Value) {
    let value: Any = value  // boxed before taking the lock
    let (deliver, others) = state.withLock { state -> (Bool, [any Subscription]) in
      guard !state.isTerminal else { return (false, []) }
      state.sides[index].buffer.append(value)
      return emitLocked(&state)
    }
    for other in others { other.cancel() }
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
      return finishLocked(&state)
    }
    for other in others { other.cancel() }
    if deliver { _ = downstream.deliver() }
  }

  @inlinable
  func request(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    let (deliver, others, upstreams) = state.withLock {
      state -> (Bool, [any Subscription], [any Subscription]) in
      guard !state.isTerminal else { return (false, [], []) }
      state.demand += demand
      let upstreams = state.subscriptions
      let (deliver, others) = emitLocked(&state)
      return (deliver, others, upstreams)
    }
    for other in others { other.cancel() }
    if deliver { addDemand(downstream.deliver()) }
    // Each upstream must produce one value per tuple the subscriber asked for.
    for upstream in upstreams where others.isEmpty { upstream.request(demand) }
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

  /// Queues every complete group the subscriber has demand for, then finishes if a finished
  /// side has nothing left to pair. Returns whether to deliver, and the subscriptions to
  /// cancel after finishing.
  @inlinable
  func emitLocked(_ state: inout State) -> (Bool, [any Subscription]) {
    var deliver = false
    while state.demand > .none, state.sides.allSatisfy({ !$0.buffer.isEmpty }) {
      let group = state.sides.indices.map { state.sides[$0].buffer.removeFirst() }
      state.demand -= 1
      deliver = downstream.enqueue(.value(combine(group))) || deliver
    }
    let (finished, others) = finishLocked(&state)
    return (finished || deliver, others)
  }

  @inlinable
  func finishLocked(_ state: inout State) -> (Bool, [any Subscription]) {
    guard !state.isTerminal, state.sides.contains(where: { $0.isFinished && $0.buffer.isEmpty })
    else { return (false, []) }
    state.isTerminal = true
    defer { state.sides = [] }
    return (downstream.enqueue(.completion(.finished)), state.subscriptions)
  }
}
