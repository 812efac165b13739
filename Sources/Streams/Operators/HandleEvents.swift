extension Publisher {
  /// Performs the specified closures when publisher events occur, without changing them.
  ///
  /// Useful for logging and debugging. The closures run on the thread of the event:
  /// `receiveOutput` and `receiveCompletion` on the delivering thread, `receiveRequest` and
  /// `receiveCancel` on the thread that asked or cancelled.
  @inlinable public func handleEvents(
    receiveSubscription: (@Sendable (any Subscription) -> Void)? = nil,
    receiveOutput: (@Sendable (Output) -> Void)? = nil,
    receiveCompletion: (@Sendable (Subscribers.Completion<Failure>) -> Void)? = nil,
    receiveCancel: (@Sendable () -> Void)? = nil,
    receiveRequest: (@Sendable (Subscribers.Demand) -> Void)? = nil
  ) -> Publishers.HandleEvents<Self> {
    Publishers.HandleEvents(
      upstream: self,
      handlers: EventHandlers(
        receiveSubscription: receiveSubscription, receiveOutput: receiveOutput,
        receiveCompletion: receiveCompletion, receiveCancel: receiveCancel,
        receiveRequest: receiveRequest))
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
