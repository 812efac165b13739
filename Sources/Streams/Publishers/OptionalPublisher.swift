extension Optional {
  /// A publisher of this optional: the wrapped value once then finished, or just finished
  /// when it is `nil`.
  ///
  /// ```swift
  /// cachedUser.publisher.append(fetchUser())  // the cached user first, if there is one
  /// ```
  public var publisher: Publisher { Publisher(self) }

  /// A publisher that publishes an optional's wrapped value once and finishes, or only
  /// finishes when it is `nil`: Combine's `Optional.Publisher`.
  ///
  /// A value is delivered on the subscriber's first demand; `nil` finishes the subscriber as
  /// soon as it attaches (as `Empty` does).
  public struct Publisher: Streams.Publisher {
    /// The wrapped type.
    public typealias Output = Wrapped
    /// The publisher never fails.
    public typealias Failure = Never

    /// The value to publish, if any.
    public let output: Wrapped?

    /// Creates a publisher of `output`'s wrapped value, or one that only finishes.
    public init(_ output: Wrapped?) { self.output = output }

    /// Attaches the subscriber: it gets the value on its first demand, or finishes at once.
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Wrapped, S.Failure == Never {
      guard let output else {
        subscriber.receive(subscription: EmptySubscription())
        subscriber.receive(completion: .finished)
        return
      }
      subscriber.receive(subscription: SingleValueSubscription(subscriber, value: output))
    }
  }
}

extension Optional.Publisher: Sendable where Wrapped: Sendable {}
extension Optional.Publisher: Equatable where Wrapped: Equatable {}
