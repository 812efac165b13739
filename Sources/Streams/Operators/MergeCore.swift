import TetherSupport

/// The shared machinery of `merge` and `flatMap`: a set of child subscriptions whose values
/// reach one subscriber, in arrival order, within its demand.
///
/// Children are added with ``subscribeChild(_:)``; while the core is open (``close()`` not
/// called yet) more may come. Demand from the subscriber goes to every live child; values
/// beyond the subscriber's demand wait in a buffer. The subscriber gets `.finished` once the
/// core is closed, every child has finished and the buffer is empty, and the first failure at
/// once, with every other child cancelled.
@usableFromInline
final class MergeCore<Downstream: Subscriber>: Subscription, FanInCore {
  @usableFromInline typealias Input = Downstream.Input
  @usableFromInline typealias Failure = Downstream.Failure

  @usableFromInline
  enum Child {
    case awaiting
    case live(any Subscription)
  }

  /// The children by id, in id order (ids only grow, so appending keeps that order).
  ///
  /// The ids are kept apart from the subscriptions: every value checks that its child is still
  /// attached, and that check is a search over plain integers, with no hashing and no
  /// existential copied (a `[Int: Child]` lookup was a third of `merge`'s cost per value).
  @usableFromInline
  struct ChildTable {
    @usableFromInline var ids: [Int] = []
    @usableFromInline var entries: [Child] = []

    @inlinable init() {}

    @inlinable var isEmpty: Bool { ids.isEmpty }

    /// Where `id` is, by binary search.
    @inlinable func position(of id: Int) -> Int? {
      var low = 0
      var high = ids.count
      while low < high {
        let middle = (low &+ high) &>> 1
        if ids[middle] < id { low = middle &+ 1 } else { high = middle }
      }
      return low < ids.count && ids[low] == id ? low : nil
    }

    @inlinable func contains(_ id: Int) -> Bool { position(of: id) != nil }

    /// Adds a child awaiting its subscription; `id` is larger than every id held.
    @inlinable mutating func appendAwaiting(_ id: Int) {
      ids.append(id)
      entries.append(.awaiting)
    }

    /// Records the subscription of the child `id`; `false` unless it was awaiting one.
    @inlinable mutating func attach(_ id: Int, _ subscription: any Subscription) -> Bool {
      guard let position = position(of: id), case .awaiting = entries[position] else {
        return false
      }
      entries[position] = .live(subscription)
      return true
    }

    /// Removes the child `id`; `false` if it was not held.
    @inlinable mutating func remove(_ id: Int) -> Bool {
      guard let position = position(of: id) else { return false }
      ids.remove(at: position)
      entries.remove(at: position)
      return true
    }

    @inlinable mutating func removeAll() {
      ids = []
      entries = []
    }

    /// The live children, oldest first, so demand reaches them in a predictable order.
    @inlinable var live: [any Subscription] {
      entries.compactMap { child in
        if case .live(let subscription) = child { return subscription }
        return nil
      }
    }
  }

  @usableFromInline
  struct State {
    @usableFromInline var children = ChildTable()
    @usableFromInline var nextChild = 0
    @usableFromInline var isOpen: Bool
    /// The subscriber has been sent its subscription; nothing may reach it before that.
    @usableFromInline var isStarted = false
    @usableFromInline var demand = Subscribers.Demand.none
    @usableFromInline var buffer: [Input] = []
    @usableFromInline var isTerminal = false
    /// flatMap's upstream of publishers: cancelled with the children, and asked for one more
    /// publisher each time a child finishes when `replenishesOuter`.
    @usableFromInline var outer: (any Subscription)?
    @usableFromInline var replenishesOuter = false

    @inlinable init(isOpen: Bool) { self.isOpen = isOpen }

    /// The live children, oldest first, so demand reaches them in a predictable order.
    @inlinable var liveChildren: [any Subscription] { children.live }
  }

  @usableFromInline let downstream: SerializedDownstream<Downstream>
  @usableFromInline let state: Lock<State>

  @inlinable
  init(_ downstream: Downstream, isOpen: Bool) {
    self.downstream = SerializedDownstream(downstream)
    state = Lock(unchecked: State(isOpen: isOpen))
  }

  /// Sends the subscriber its subscription; call after reserving the first children (so an
  /// empty, closed core does not finish early) and before subscribing to them.
  @inlinable
  func start(subscription: any Subscription) {
    let deliver = state.withLockUnchecked { state in
      state.isStarted = true
      return downstream.enqueue(.subscription(subscription))
    }
    if deliver { addDemand(downstream.deliver()) }
    finishIfDone { _ in }
  }

  /// Keeps flatMap's upstream subscription, to cancel it with the children and, if
  /// `replenish`, to ask it for one more publisher whenever a child finishes.
  ///
  /// - Returns: `false` (and keeps nothing) if the core already ended.
  @inlinable
  func attachOuter(_ subscription: any Subscription, replenish: Bool) -> Bool {
    state.withLockUnchecked { state in
      guard !state.isTerminal else { return false }
      state.outer = subscription
      state.replenishesOuter = replenish
      return true
    }
  }

  /// Reserves a child slot for `publisher` and returns the closure that subscribes to it, or
  /// `nil` if the core already ended. Call the closure without holding a lock.
  @inlinable
  func subscribeChild<P: Publisher>(_ publisher: P) -> (() -> Void)?
  where P.Output == Input, P.Failure == Failure {
    guard let side = reserveChild() else { return nil }
    return { publisher.subscribe(side) }
  }

  /// Reserves a child slot for `publisher` and subscribes to it at once (flatMap); does
  /// nothing if the core already ended. Call without holding a lock.
  @inlinable
  func subscribeChildNow<P: Publisher>(_ publisher: P)
  where P.Output == Input, P.Failure == Failure {
    guard let side = reserveChild() else { return }
    publisher.subscribe(side)
  }

  /// Reserves a child slot and returns the subscriber for it, or `nil` if the core ended.
  @inlinable
  func reserveChild() -> FanInSide<Input, Failure>? {
    let id = state.withLockUnchecked { state -> Int? in
      guard !state.isTerminal else { return nil }
      defer { state.nextChild += 1 }
      state.children.appendAwaiting(state.nextChild)
      return state.nextChild
    }
    guard let id else { return nil }
    return subscriber(forSide: id)
  }

  /// No more children will be added; the core finishes when the last one does.
  @inlinable
  func close() {
    finishIfDone { $0.isOpen = false }
  }

  /// Fails the subscriber at once (flatMap's outer upstream failed).
  @inlinable
  func fail(_ error: Failure) {
    terminate(with: .failure(error))
  }

  /// Whether the subscriber cancelled or the core completed.
  @inlinable var isTerminal: Bool { state.withLockUnchecked { $0.isTerminal } }

  @inlinable
  func request(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    let children = state.withLockUnchecked { state -> [any Subscription] in
      state.demand += demand
      return state.liveChildren
    }
    for child in children { child.request(demand) }
    pump()
  }

  @inlinable
  func cancel() {
    let (children, outer) = state.withLockUnchecked {
      state -> ([any Subscription], (any Subscription)?) in
      guard !state.isTerminal else { return ([], nil) }
      state.isTerminal = true
      defer {
        state.children.removeAll()
        state.buffer = []
        state.outer = nil
      }
      return (state.liveChildren, state.outer)
    }
    downstream.cancel()
    outer?.cancel()
    for child in children { child.cancel() }
  }

  // MARK: Child events

  @inlinable
  func side(_ id: Int, received subscription: any Subscription) {
    let demand = state.withLockUnchecked { state -> Subscribers.Demand? in
      guard !state.isTerminal, state.children.attach(id, subscription) else { return nil }
      return state.demand
    }
    subscription.requestOrCancel(demand)
  }

  @inlinable
  func side<Value>(_ id: Int, received value: Value) {
    // Every child is a `FanInSide<Input, Failure>` (see `subscribeChild`), so `Value` is
    // `Input`; the check is a pointer comparison, where `as!` would cost a runtime cast on
    // every value.
    precondition(Value.self == Input.self)
    child(id, received: unsafeBitCast(value, to: Input.self))
  }

  @inlinable
  func child(_ id: Int, received input: Input) {
    let claim = state.withLockUnchecked { state -> SerializedDownstream<Downstream>.Claim in
      guard !state.isTerminal, state.children.contains(id) else { return .none }
      guard state.demand > .none, state.buffer.isEmpty else {
        state.buffer.append(input)
        return .none
      }
      state.demand -= 1
      return downstream.enqueue(value: input)
    }
    addDemand(downstream.complete(claim, value: input))
  }

  @inlinable
  func side(_ id: Int, completedWith completion: Subscribers.Completion<Failure>) {
    switch completion {
    case .finished:
      var outer: (any Subscription)?
      finishIfDone { state in
        guard state.children.remove(id) else { return }
        if state.replenishesOuter { outer = state.outer }
      }
      outer?.request(.max(1))
    case .failure:
      let known = state.withLockUnchecked { $0.children.contains(id) }
      if known { terminate(with: completion) }
    }
  }

  // MARK: Delivery

  /// Adds demand the subscriber returned from `receive(_:)`, passing it to every live child.
  @inlinable
  func addDemand(_ demand: Subscribers.Demand) {
    if demand > .none { request(demand) }
  }

  /// Moves buffered values to the subscriber while it has demand, then finishes if done.
  @inlinable
  func pump() {
    let deliver = state.withLockUnchecked { state -> Bool in
      var deliver = false
      while !state.isTerminal, state.demand > .none, !state.buffer.isEmpty {
        state.demand -= 1
        deliver = downstream.enqueue(.value(state.buffer.removeFirst())) || deliver
      }
      return finishLocked(&state) || deliver
    }
    if deliver { addDemand(downstream.deliver()) }
  }

  @inlinable
  func finishIfDone(_ change: (inout State) -> Void) {
    let deliver = state.withLockUnchecked { state -> Bool in
      guard !state.isTerminal else { return false }
      change(&state)
      return finishLocked(&state)
    }
    if deliver { addDemand(downstream.deliver()) }
  }

  /// Queues `.finished` if the core is closed, childless and drained; returns whether the
  /// caller must deliver.
  @inlinable
  func finishLocked(_ state: inout State) -> Bool {
    guard !state.isTerminal, state.isStarted, !state.isOpen, state.children.isEmpty,
      state.buffer.isEmpty
    else { return false }
    state.isTerminal = true
    state.outer = nil
    return downstream.enqueue(.completion(.finished))
  }

  @inlinable
  func terminate(with completion: Subscribers.Completion<Failure>) {
    let (deliver, children, outer) = state.withLockUnchecked {
      state -> (Bool, [any Subscription], (any Subscription)?) in
      guard !state.isTerminal else { return (false, [], nil) }
      state.isTerminal = true
      defer {
        state.children.removeAll()
        state.buffer = []
        state.outer = nil
      }
      return (downstream.enqueue(.completion(completion)), state.liveChildren, state.outer)
    }
    outer?.cancel()
    for child in children { child.cancel() }
    if deliver { _ = downstream.deliver() }
  }
}
