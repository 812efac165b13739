extension Publisher {
  /// Handles an error from the upstream publisher by replacing it with another publisher.
  ///
  /// The new publisher is asked for the demand the subscriber still had outstanding.
  ///
  /// ```swift
  /// let safe = fetchUser().catch { _ in Just(User.guest) }
  /// ```
  @inlinable public func `catch`<P: Publisher>(
    _ handler: @escaping @Sendable (Failure) -> P
  ) -> Publishers.Catch<Self, P> where P.Output == Output {
    Publishers.Catch(upstream: self) { completion in
      switch completion {
      case .finished: .finish(.finished)
      case .failure(let error): .continueWith { handler(error) }
      }
    }
  }
}

extension Publishers {
  /// A publisher that handles an error from the upstream by switching to another publisher.
  public typealias Catch<Upstream: Publisher, NewPublisher: Publisher> = CompletionHandoff<
    Upstream, NewPublisher
  > where Upstream.Output == NewPublisher.Output
}
