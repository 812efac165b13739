/// A publisher that awaits subscription before running the supplied closure to create a
/// publisher for the new subscriber.
///
/// ```swift
/// let now = Deferred { Just(ContinuousClock.now) }  // read at subscription, not at creation
/// ```
public struct Deferred<DeferredPublisher: Publisher>: Publisher {
  /// Deferred publishes the created publisher's elements.
  public typealias Output = DeferredPublisher.Output
  /// Deferred fails when the created publisher fails.
  public typealias Failure = DeferredPublisher.Failure

  /// The closure to run to create a publisher for each subscriber.
  public let createPublisher: @Sendable () -> DeferredPublisher

  /// Creates a deferred publisher.
  public init(createPublisher: @escaping @Sendable () -> DeferredPublisher) {
    self.createPublisher = createPublisher
  }

  /// Creates a publisher with the closure and attaches the subscriber to it.
  public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
    createPublisher().subscribe(subscriber)
  }
}

extension Deferred: Sendable {}
