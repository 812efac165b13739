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

    /// Creates a sink with the given closures.
    public init(
      receiveCompletion: @escaping @Sendable (Subscribers.Completion<Failure>) -> Void,
      receiveValue: @escaping @Sendable (Input) -> Void
    ) {
      self.receiveCompletion = receiveCompletion
      self.receiveValue = receiveValue
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

    /// Cancels the subscription; safe to call from any thread, any number of times.
    public func cancel() { link.cancel() }
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
  @inlinable public func sink(
    receiveCompletion: @escaping @Sendable (Subscribers.Completion<Failure>) -> Void,
    receiveValue: @escaping @Sendable (Output) -> Void
  ) -> AnyCancellable {
    let sink = Subscribers.Sink<Output, Failure>(
      receiveCompletion: receiveCompletion, receiveValue: receiveValue)
    subscribe(sink)
    return AnyCancellable(sink)
  }
}

extension Publisher where Failure == Never {
  /// Attaches a subscriber that calls the closure with each value of a publisher that cannot
  /// fail.
  @inlinable public func sink(receiveValue: @escaping @Sendable (Output) -> Void) -> AnyCancellable
  {
    sink(receiveCompletion: { _ in }, receiveValue: receiveValue)
  }
}
