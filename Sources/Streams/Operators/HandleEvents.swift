extension Publisher {
  /// Performs the specified closures when publisher events occur, without changing them.
  ///
  /// Useful for logging and debugging. Nonisolated closures run on the thread of the event:
  /// `receiveOutput` and `receiveCompletion` on the delivering thread, `receiveRequest` and
  /// `receiveCancel` on the thread that asked or cancelled. Closures written in an actor's code
  /// (a `@MainActor` view model setting `isLoading`) belong to that actor: an event on the
  /// main thread reaches a main-actor closure at once, one elsewhere is queued for the actor,
  /// in order; either way the event goes on downstream without waiting for the closure.
  @inlinable public func handleEvents(
    @_inheritActorContext receiveSubscription: (
      @Sendable @isolated(any) (any Subscription) -> Void
    )? = nil,
    @_inheritActorContext receiveOutput: (@Sendable @isolated(any) (Output) -> Void)? = nil,
    @_inheritActorContext receiveCompletion: (
      @Sendable @isolated(any) (Subscribers.Completion<Failure>) -> Void
    )? = nil,
    @_inheritActorContext receiveCancel: (@Sendable @isolated(any) () -> Void)? = nil,
    @_inheritActorContext receiveRequest: (
      @Sendable @isolated(any) (Subscribers.Demand) -> Void
    )? = nil
  ) -> Publishers.HandleEvents<Self> {
    Publishers.HandleEvents(
      upstream: self,
      handlers: EventHandlers(
        isolatedSubscription: receiveSubscription, output: receiveOutput,
        completion: receiveCompletion, cancel: receiveCancel, request: receiveRequest))
  }
}

extension Publishers {
  /// A publisher that performs the specified closures when publisher events occur.
  public struct HandleEvents<Upstream: Publisher>: Publisher {
    /// HandleEvents publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// HandleEvents fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    @usableFromInline let handlers: EventHandlers<Output, Failure>

    @inlinable init(upstream: Upstream, handlers: EventHandlers<Output, Failure>) {
      self.upstream = upstream
      self.handlers = handlers
    }

    /// Attaches the subscriber behind a stage that reports every event.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(HandleEventsInner(downstream: subscriber, handlers: handlers))
    }
  }
}

@usableFromInline
final class HandleEventsInner<Downstream: Subscriber>: Subscriber, Subscription,
  @unchecked Sendable
{
  // @unchecked: `link` is a Mutex; `downstream` is only called from `receive` methods,
  // which the upstream serialises; the handlers are immutable `@Sendable` closures.
  @usableFromInline typealias Input = Downstream.Input
  @usableFromInline typealias Failure = Downstream.Failure

  @usableFromInline let downstream: Downstream
  @usableFromInline let handlers: EventHandlers<Downstream.Input, Downstream.Failure>
  // Kept apart from `handlers`: `request` and `cancel` are called through
  // `any Subscription`, unspecialised, where reading a generic struct costs a metadata
  // lookup.
  @usableFromInline let receiveRequest: (@Sendable (Subscribers.Demand) -> Void)?
  @usableFromInline let receiveCancel: (@Sendable () -> Void)?
  @usableFromInline let link = UpstreamLink()

  @inlinable init(
    downstream: Downstream, handlers: EventHandlers<Downstream.Input, Downstream.Failure>
  ) {
    self.downstream = downstream
    self.handlers = handlers
    receiveRequest = handlers.receiveRequest
    receiveCancel = handlers.receiveCancel
  }

  @inlinable func receive(subscription: any Subscription) {
    handlers.receiveSubscription?(subscription)
    guard receiveRequest != nil || receiveCancel != nil else {
      // Nothing to observe on the way up: hand the upstream subscription straight down, as
      // `map` does, so `request` and `cancel` cost no lock or call here. (The link stays
      // awaiting; `receive(completion:)` still forwards one completion only.)
      downstream.receive(subscription: subscription)
      return
    }
    guard link.attach(subscription) else { return }
    downstream.receive(subscription: self)
  }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    handlers.receiveOutput?(input)
    return downstream.receive(input)
  }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    guard link.finish() else { return }
    handlers.receiveCompletion?(completion)
    downstream.receive(completion: completion)
  }

  @inlinable func request(_ demand: Subscribers.Demand) {
    receiveRequest?(demand)
    link.request(demand)
  }

  @inlinable func cancel() {
    guard case .some(let subscription) = link.take() else { return }
    receiveCancel?()
    subscription?.cancel()
  }
}

/// The closures of a `handleEvents` stage, without the upstream's type (which would make the
/// stage's type grow with the length of the chain and stop the compiler specialising it).
@usableFromInline
struct EventHandlers<Output, Failure: Error>: Sendable {
  @usableFromInline let receiveSubscription: (@Sendable (any Subscription) -> Void)?
  @usableFromInline let receiveOutput: (@Sendable (Output) -> Void)?
  @usableFromInline let receiveCompletion: (@Sendable (Subscribers.Completion<Failure>) -> Void)?
  @usableFromInline let receiveCancel: (@Sendable () -> Void)?
  @usableFromInline let receiveRequest: (@Sendable (Subscribers.Demand) -> Void)?

  @inlinable init(
    receiveSubscription: (@Sendable (any Subscription) -> Void)?,
    receiveOutput: (@Sendable (Output) -> Void)?,
    receiveCompletion: (@Sendable (Subscribers.Completion<Failure>) -> Void)?,
    receiveCancel: (@Sendable () -> Void)?,
    receiveRequest: (@Sendable (Subscribers.Demand) -> Void)?
  ) {
    self.receiveSubscription = receiveSubscription
    self.receiveOutput = receiveOutput
    self.receiveCompletion = receiveCompletion
    self.receiveCancel = receiveCancel
    self.receiveRequest = receiveRequest
  }
}

extension EventHandlers {
  /// Handlers from `handleEvents`' closures: nonisolated ones are called directly, ones
  /// isolated to an actor through one ordered queue per actor.
  @usableFromInline init(
    isolatedSubscription: (@Sendable @isolated(any) (any Subscription) -> Void)?,
    output: (@Sendable @isolated(any) (Output) -> Void)?,
    completion: (@Sendable @isolated(any) (Subscribers.Completion<Failure>) -> Void)?,
    cancel: (@Sendable @isolated(any) () -> Void)?,
    request: (@Sendable @isolated(any) (Subscribers.Demand) -> Void)?
  ) {
    let queues = HandlerQueues()
    var onSubscription: (@Sendable (any Subscription) -> Void)?
    var onOutput: (@Sendable (Output) -> Void)?
    var onCompletion: (@Sendable (Subscribers.Completion<Failure>) -> Void)?
    var onCancel: (@Sendable () -> Void)?
    var onRequest: (@Sendable (Subscribers.Demand) -> Void)?
    if let isolatedSubscription {
      onSubscription = queues.deliver(IsolatedClosure(isolatedSubscription))
    }
    if let output { onOutput = queues.deliver(IsolatedClosure(output)) }
    if let completion { onCompletion = queues.deliver(IsolatedClosure(completion)) }
    if let cancel {
      let handler = queues.deliver(IsolatedClosure<Void>(cancel))
      onCancel = { handler(()) }
    }
    if let request { onRequest = queues.deliver(IsolatedClosure(request)) }
    self.init(
      receiveSubscription: onSubscription, receiveOutput: onOutput,
      receiveCompletion: onCompletion, receiveCancel: onCancel, receiveRequest: onRequest)
  }
}

/// The queues of one `handleEvents` call's isolated closures: one per actor, shared, so the
/// closures of one actor see the events in the order they happened.
private final class HandlerQueues {
  private var queue: ActorQueue?

  func deliver<Input>(_ closure: IsolatedClosure<Input>) -> @Sendable (Input) -> Void {
    guard closure.isolation != nil else { return closure.body }
    let target = ActorQueue.serving(closure.isolation, sharing: queue)
    if queue == nil { queue = target }
    return closure.delivered(through: target)
  }
}
