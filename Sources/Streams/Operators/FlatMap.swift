extension Publisher {
  /// Transforms every value into a publisher and merges the values of all those publishers
  /// into one stream, with at most `maxPublishers` of them subscribed at a time.
  ///
  /// Upstream is asked for `maxPublishers` values at first and for one more each time an
  /// inner publisher finishes. Demand from the subscriber goes to every live inner publisher;
  /// values beyond it are buffered. The result finishes when the upstream and every inner
  /// publisher have finished, and fails as soon as any of them fails, cancelling the rest.
  ///
  /// ```swift
  /// userIDs.flatMap(maxPublishers: .max(4)) { id in loadProfile(id) }
  /// ```
  public func flatMap<T, P: Publisher>(
    maxPublishers: Subscribers.Demand = .unlimited,
    _ transform: @escaping @Sendable (Output) -> P
  ) -> Publishers.FlatMap<P, Self> where T == P.Output, P.Failure == Failure {
    Publishers.FlatMap(upstream: self, maxPublishers: maxPublishers, transform: transform)
  }
}

extension Publisher where Failure == Never {
  /// Transforms every value into a publisher that can fail, and merges their values; the
  /// result fails with the inner publishers' failure type.
  ///
  /// This publisher cannot fail, so it is retyped with `setFailureType(to:)` to the inner
  /// publishers' failure type, as Combine does. Values, demand and `maxPublishers` work as in
  /// the overload whose failure types match; the first inner failure is forwarded at once and
  /// cancels this publisher and every other inner publisher.
  ///
  /// ```swift
  /// let ticks = PassthroughSubject<Int, Never>()
  /// ticks.flatMap { tick in fetchReport(tick) }  // fetchReport fails with FetchError
  ///   .sink(receiveCompletion: { print($0) }, receiveValue: { show($0) })
  /// ```
  public func flatMap<P: Publisher>(
    maxPublishers: Subscribers.Demand = .unlimited,
    _ transform: @escaping @Sendable (Output) -> P
  ) -> Publishers.FlatMap<P, Publishers.SetFailureType<Self, P.Failure>> {
    Publishers.FlatMap(
      upstream: setFailureType(to: P.Failure.self), maxPublishers: maxPublishers,
      transform: transform)
  }

  /// Transforms every value into a publisher and merges their values, when neither this
  /// publisher nor the inner publishers can fail.
  ///
  /// This overload keeps the types unchanged (no `setFailureType(to:)` on either side) and is
  /// the one chosen when both failure types are `Never`.
  public func flatMap<P: Publisher>(
    maxPublishers: Subscribers.Demand = .unlimited,
    _ transform: @escaping @Sendable (Output) -> P
  ) -> Publishers.FlatMap<P, Self> where P.Failure == Never {
    Publishers.FlatMap(upstream: self, maxPublishers: maxPublishers, transform: transform)
  }
}

extension Publisher {
  /// Transforms every value into a publisher that cannot fail, and merges their values; the
  /// result fails with this publisher's failure type.
  ///
  /// Each inner publisher is retyped with `setFailureType(to:)` to this publisher's failure
  /// type, as Combine does. Values, demand and `maxPublishers` work as in the overload whose
  /// failure types match; a failure of this publisher is forwarded at once and cancels every
  /// inner publisher.
  ///
  /// ```swift
  /// let ids = PassthroughSubject<Int, LoadError>()
  /// ids.flatMap { id in cache.publisher(for: id) }  // the cache's publisher never fails
  /// ```
  public func flatMap<P: Publisher>(
    maxPublishers: Subscribers.Demand = .unlimited,
    _ transform: @escaping @Sendable (Output) -> P
  ) -> Publishers.FlatMap<Publishers.SetFailureType<P, Failure>, Self>
  where P.Failure == Never {
    Publishers.FlatMap(
      upstream: self, maxPublishers: maxPublishers,
      transform: sendableClosure(transform, then: RetypeFailure<P, Failure>()))
  }
}

extension Publishers {
  /// A publisher that transforms every value of its upstream into a publisher and merges
  /// their values.
  public struct FlatMap<NewPublisher: Publisher, Upstream: Publisher>: Publisher
  where NewPublisher.Failure == Upstream.Failure {
    /// The kind of values published: the inner publishers'.
    public typealias Output = NewPublisher.Output
    /// The kind of errors published: the upstream's and inner publishers'.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The maximum number of concurrent publisher subscriptions.
    public let maxPublishers: Subscribers.Demand
    /// A closure that takes an element as a parameter and returns a publisher that produces
    /// elements of that type.
    public let transform: @Sendable (Upstream.Output) -> NewPublisher

    /// Creates a publisher that flat-maps `upstream` through `transform`.
    public init(
      upstream: Upstream, maxPublishers: Subscribers.Demand,
      transform: @escaping @Sendable (Upstream.Output) -> NewPublisher
    ) {
      self.upstream = upstream
      self.maxPublishers = maxPublishers
      self.transform = transform
    }

    /// Attaches the subscriber through a subscription that merges the inner publishers.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let core = MergeCore(subscriber, isOpen: true)
      // Made here, where every type is known, so that it runs specialised: the outer
      // subscriber is often reached through the `Subscriber` protocol (a `Sequence` or a
      // subject upstream calls it unspecialised), and a child subscribed from there would run
      // every one of its values through unspecialised generic code (metadata lookups in
      // `MergeCore` and `SerializedDownstream` on every value).
      let subscribeChild: (NewPublisher) -> Void = { core.subscribeChildNow($0) }
      upstream.subscribe(
        FlatMapOuter<Upstream, NewPublisher, S>(
          core: core, maxPublishers: maxPublishers, transform: transform,
          subscribeChild: subscribeChild))
    }
  }
}

/// Receives the upstream's values, turns each into an inner publisher and adds it to the
/// merge.
///
/// `transform` runs only inside `receive(_:)`, which the upstream never calls concurrently.
@usableFromInline
final class FlatMapOuter<Upstream: Publisher, NewPublisher: Publisher, Downstream>:
  Subscriber
where
  Downstream: Subscriber, Downstream.Input == NewPublisher.Output,
  Downstream.Failure == NewPublisher.Failure, Upstream.Failure == NewPublisher.Failure
{
  @usableFromInline typealias Input = Upstream.Output
  @usableFromInline typealias Failure = Upstream.Failure

  @usableFromInline let core: MergeCore<Downstream>
  @usableFromInline let maxPublishers: Subscribers.Demand
  @usableFromInline let transform: @Sendable (Input) -> NewPublisher
  /// `core.subscribeChildNow`, specialised where the publisher was subscribed to.
  @usableFromInline let subscribeChild: (NewPublisher) -> Void

  @inlinable
  init(
    core: MergeCore<Downstream>, maxPublishers: Subscribers.Demand,
    transform: @escaping @Sendable (Input) -> NewPublisher,
    subscribeChild: @escaping (NewPublisher) -> Void
  ) {
    self.core = core
    self.maxPublishers = maxPublishers
    self.transform = transform
    self.subscribeChild = subscribeChild
  }

  @inlinable
  func receive(subscription: any Subscription) {
    guard core.attachOuter(subscription, replenish: maxPublishers != .unlimited) else {
      subscription.cancel()
      return
    }
    core.start(subscription: core)
    if maxPublishers > .none { subscription.request(maxPublishers) }
  }

  @inlinable
  func receive(_ input: Input) -> Subscribers.Demand {
    guard !core.isTerminal else { return .none }
    subscribeChild(transform(input))
    return .none
  }

  @inlinable
  func receive(completion: Subscribers.Completion<Failure>) {
    switch completion {
    case .finished: core.close()
    case .failure(let error): core.fail(error)
    }
  }
}
