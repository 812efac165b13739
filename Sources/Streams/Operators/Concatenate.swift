extension Publishers {
  /// A publisher that emits all of one publisher's elements before those from another.
  ///
  /// `prepend` and `append` build it. The suffix is subscribed to when the prefix finishes
  /// and is asked for the demand the subscriber still had outstanding; if the prefix fails,
  /// the stream fails and the suffix is never subscribed to.
  public typealias Concatenate<Prefix: Publisher, Suffix: Publisher> = CompletionHandoff<
    Prefix, Suffix
  > where Prefix.Output == Suffix.Output, Prefix.Failure == Suffix.Failure
}

extension Publishers.CompletionHandoff where Upstream.Failure == Next.Failure {
  /// Creates a publisher that republishes `prefix`, then `suffix` (`prepend`, `append`).
  @inlinable public init(prefix: Upstream, suffix: Next) {
    self.init(upstream: prefix) { completion in
      switch completion {
      case .finished: .continueWith { suffix }
      case .failure(let error): .finish(.failure(error))
      }
    }
  }
}
