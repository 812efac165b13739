extension Publisher {
  /// Transforms every element with a throwing closure; a thrown error fails the stream and
  /// cancels upstream.
  @inlinable public func tryMap<T>(
    _ transform: @escaping @Sendable (Output) throws -> T
  )
    -> Publishers.TryMap<Self, T>
  {
    Publishers.TryMap(upstream: self, transform: transform)
  }
}

extension Publishers {
  /// A publisher that transforms elements with a closure that may throw.
  public struct TryMap<Upstream: Publisher, Output>: Publisher {
    /// TryMap fails with the upstream's error or the error the closure threw.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that transforms elements; throwing ends the stream with that error.
    public let transform: @Sendable (Upstream.Output) throws -> Output

    /// Creates a publisher that transforms `upstream`'s elements with `transform`.
    @inlinable public init(
      upstream: Upstream, transform: @escaping @Sendable (Upstream.Output) throws -> Output
    ) {
      self.upstream = upstream
      self.transform = transform
    }

    /// Attaches the subscriber behind a transforming stage that can end the stream.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        TryMapInner<Upstream.Output, Upstream.Failure, S>(
          downstream: subscriber, transform: transform))
    }
  }
}

/// The stage behind `tryMap`: the downstream's subscription (through `link`, a Mutex) so that
/// a throw can cancel upstream and a downstream cancel releases the upstream subscription.
/// `isDone` is only touched in `receive` calls, which the upstream serialises.
@usableFromInline
final class TryMapInner<Input, Failure: Error, Downstream: Subscriber>: Subscriber,
  Subscription, @unchecked Sendable
where Downstream.Failure == any Error {
  // @unchecked: `link` is a Mutex; `isDone` and `downstream` are used only in the
  // serialised `receive` calls; `transform` is an immutable `@Sendable` closure.
  @usableFromInline let downstream: Downstream
  @usableFromInline let transform: @Sendable (Input) throws -> Downstream.Input
  @usableFromInline let link = UpstreamLink()
  @usableFromInline var isDone = false

  @inlinable init(
    downstream: Downstream, transform: @escaping @Sendable (Input) throws -> Downstream.Input
  ) {
    self.downstream = downstream
    self.transform = transform
  }

  @inlinable func receive(subscription: any Subscription) {
    guard link.attach(subscription) else { return }
    downstream.receive(subscription: self)
  }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    guard !isDone else { return .none }
    do {
      return downstream.receive(try transform(input))
    } catch {
      isDone = true
      link.cancel()
      downstream.receive(completion: .failure(error))
      return .none
    }
  }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    guard !isDone, link.finish() else { return }
    isDone = true
    switch completion {
    case .finished: downstream.receive(completion: .finished)
    case .failure(let error): downstream.receive(completion: .failure(error))
    }
  }

  @inlinable func request(_ demand: Subscribers.Demand) { link.request(demand) }

  @inlinable func cancel() { link.cancel() }
}
