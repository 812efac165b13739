extension Publisher where Failure == Never, Output: Sendable {
  /// The publisher's values as an `AsyncStream`: every value, in order, with no drops.
  ///
  /// Each access subscribes anew, so each `for await` loop is its own subscription and many
  /// loops can watch one publisher. Values that arrive faster than the loop consumes them are
  /// buffered without bound; use `values(bufferingPolicy:)` to conflate instead. Breaking
  /// out of the loop, or cancelling its task, cancels the subscription at once. The stream
  /// ends when the publisher finishes, after the values already delivered.
  ///
  /// ```swift
  /// for await value in subject.values { print(value) }
  /// ```
  @inlinable public var values: AsyncStream<Output> { values(bufferingPolicy: .unbounded) }

  /// The publisher's values as an `AsyncStream` with the given buffering policy.
  ///
  /// `.bufferingNewest(1)` conflates: a slow loop skips to the newest value but always gets
  /// the last one. `.bufferingOldest(n)` keeps the first `n` waiting values and drops later
  /// ones until the loop catches up.
  @inlinable public func values(
    bufferingPolicy: AsyncStream<Output>.Continuation.BufferingPolicy
  ) -> AsyncStream<Output> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Output.self, bufferingPolicy: bufferingPolicy)
    let subscriber = StreamSubscriber<Output, Never>(
      yield: { continuation.yield($0) }, finish: { _ in continuation.finish() })
    continuation.onTermination = { _ in subscriber.cancel() }
    subscribe(subscriber)
    return stream
  }
}

extension Publisher where Output: Sendable {
  /// The publisher's values as an `AsyncThrowingStream`: every value, in order, then the
  /// publisher's failure thrown once.
  ///
  /// The same rules as for publishers that cannot fail apply: each access is its own
  /// subscription, the buffer is unbounded, and leaving the loop cancels at once.
  ///
  /// ```swift
  /// do {
  ///   for try await value in publisher.values { print(value) }
  /// } catch {
  ///   print("failed:", error)
  /// }
  /// ```
  @inlinable public var values: AsyncThrowingStream<Output, any Error> {
    values(bufferingPolicy: .unbounded)
  }

  /// The publisher's values as an `AsyncThrowingStream` with the given buffering policy.
  @inlinable public func values(
    bufferingPolicy: AsyncThrowingStream<Output, any Error>.Continuation.BufferingPolicy
  ) -> AsyncThrowingStream<Output, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(
      of: Output.self, throwing: (any Error).self, bufferingPolicy: bufferingPolicy)
    let subscriber = StreamSubscriber<Output, Failure>(
      yield: { continuation.yield($0) },
      finish: { completion in
        switch completion {
        case .finished: continuation.finish()
        case .failure(let error): continuation.finish(throwing: error)
        }
      })
    continuation.onTermination = { _ in subscriber.cancel() }
    subscribe(subscriber)
    return stream
  }
}

/// The subscriber behind `values`: unlimited demand, each value yielded to the stream.
@usableFromInline
final class StreamSubscriber<Input: Sendable, Failure: Error>: Subscriber, Cancellable {
  @usableFromInline let yield: @Sendable (Input) -> Void
  @usableFromInline let finish: @Sendable (Subscribers.Completion<Failure>) -> Void
  @usableFromInline let link = UpstreamLink()

  @inlinable init(
    yield: @escaping @Sendable (Input) -> Void,
    finish: @escaping @Sendable (Subscribers.Completion<Failure>) -> Void
  ) {
    self.yield = yield
    self.finish = finish
  }

  @usableFromInline func receive(subscription: any Subscription) {
    if link.attach(subscription) { subscription.request(.unlimited) }
  }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    yield(input)
    return .none
  }

  @usableFromInline func receive(completion: Subscribers.Completion<Failure>) {
    if link.finish() { finish(completion) }
  }

  @usableFromInline func cancel() { link.cancel() }
}
