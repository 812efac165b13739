import Synchronization

extension Subscribers {
  /// A subscriber that requests an unlimited number of values and calls closures with each
  /// value and with the completion.
  ///
  /// The closures run on whatever thread the publisher delivers on, so they are `@Sendable`.
  /// Calls are never concurrent for one sink. After ``cancel()`` returns no new call starts.
  public final class Sink<Input, Failure: Error>: Subscriber, Cancellable,
    CustomStringConvertible
  {
    /// The closure called with each value.
    public let receiveValue: @Sendable (Input) -> Void
    /// The closure called with the completion.
    public let receiveCompletion: @Sendable (Subscribers.Completion<Failure>) -> Void

    private let link = UpstreamLink()
    /// Delivers to closures isolated to an actor; `nil` when they are nonisolated.
    private let actorQueue: ActorQueue?

    /// Creates a sink with the given closures.
    public init(
      receiveCompletion: @escaping @Sendable (Subscribers.Completion<Failure>) -> Void,
      receiveValue: @escaping @Sendable (Input) -> Void
    ) {
      self.receiveCompletion = receiveCompletion
      self.receiveValue = receiveValue
      actorQueue = nil
    }

    /// Creates a sink whose closures run on their actor: `sink`'s entry point. Nonisolated
    /// closures are called on the delivering thread, exactly as with `init(receiveCompletion:
    /// receiveValue:)`.
    @usableFromInline init(
      isolatedCompletion:
        @escaping @Sendable @isolated(any) (Subscribers.Completion<Failure>) ->
        Void,
      isolatedValue: @escaping @Sendable @isolated(any) (Input) -> Void
    ) {
      let value = IsolatedClosure(isolatedValue)
      let completion = IsolatedClosure(isolatedCompletion)
      let queue = ActorQueue.serving(value.isolation ?? completion.isolation, sharing: nil)
      let completionQueue = ActorQueue.serving(completion.isolation, sharing: queue)
      receiveValue = value.delivered(through: queue)
      if let queue, let completionQueue, completionQueue !== queue {
        // Closures isolated to two different actors: the completion still waits for every
        // value, then hops to its own actor.
        let deliver = completion.delivered(through: completionQueue)
        receiveCompletion = { completion in queue.run { deliver(completion) } }
      } else {
        receiveCompletion = completion.delivered(through: queue)
      }
      actorQueue = queue
    }

    /// A textual representation: `Sink`.
    public var description: String { "Sink" }

    /// Keeps the subscription and requests unlimited values.
    public func receive(subscription: any Subscription) {
      if link.attach(subscription) { subscription.request(.unlimited) }
    }

    /// Calls `receiveValue` with the value.
    @inlinable public func receive(_ value: Input) -> Subscribers.Demand {
      receiveValue(value)
      return .none
    }

    /// Releases the subscription and calls `receiveCompletion`.
    public func receive(completion: Subscribers.Completion<Failure>) {
      if link.finish() { receiveCompletion(completion) }
    }

    /// Cancels the subscription; safe to call from any thread, any number of times. Values
    /// still waiting for a closure's actor are dropped.
    public func cancel() {
      link.cancel()
      actorQueue?.cancel()
    }
  }
}

extension Publisher {
  /// Attaches a subscriber with closure-based behaviour and requests unlimited values.
  ///
  /// Keep the returned ``AnyCancellable``: the subscription is cancelled when it is released.
  ///
  /// ```swift
  /// let cancellable = publisher.sink(
  ///   receiveCompletion: { print("done", $0) },
  ///   receiveValue: { print("got", $0) })
  /// ```
  ///
  /// The closures are isolated like the code that writes them. In nonisolated code they are
  /// `@Sendable` and run on the delivering thread. In an actor's code (a `@MainActor` view
  /// model) they belong to that actor and may use its state: a value delivered on the main
  /// thread reaches a main-actor closure at once; one delivered elsewhere is queued and reaches
  /// it on the actor, in order, without blocking the publisher. After `cancel()` returns,
  /// nothing queued is delivered.
  @inlinable public func sink(
    @_inheritActorContext receiveCompletion:
      @escaping @Sendable @isolated(any) (
        Subscribers.Completion<Failure>
      ) -> Void,
    @_inheritActorContext receiveValue: @escaping @Sendable @isolated(any) (Output) -> Void
  ) -> AnyCancellable {
    let sink = Subscribers.Sink<Output, Failure>(
      isolatedCompletion: receiveCompletion, isolatedValue: receiveValue)
    subscribe(sink)
    return AnyCancellable(sink)
  }
}

extension Publisher where Failure == Never {
  /// Attaches a subscriber that calls the closure with each value of a publisher that cannot
  /// fail.
  ///
  /// The closure is isolated like the code that writes it; see
  /// ``Publisher/sink(receiveCompletion:receiveValue:)``. The view model shape of Combine code
  /// compiles as it is:
  ///
  /// ```swift
  /// @MainActor final class ViewModel {
  ///   var items: [String] = []
  ///   private var cancellables = Set<AnyCancellable>()
  ///
  ///   func bind(_ items: some Publisher<[String], Never>) {
  ///     items.receive(on: DispatchQueue.main)
  ///       .sink { [weak self] in self?.items = $0 }
  ///       .store(in: &cancellables)
  ///   }
  /// }
  /// ```
  @inlinable public func sink(
    @_inheritActorContext receiveValue: @escaping @Sendable @isolated(any) (Output) -> Void
  ) -> AnyCancellable {
    let sink = Subscribers.Sink<Output, Failure>(
      isolatedCompletion: { _ in }, isolatedValue: receiveValue)
    subscribe(sink)
    return AnyCancellable(sink)
  }
}
