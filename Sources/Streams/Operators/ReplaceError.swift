extension Publisher {
  /// Replaces any error from the upstream publisher with the given element, then finishes.
  ///
  /// The replacement counts against demand: it is delivered as soon as the subscriber has
  /// asked for a value.
  @inlinable public func replaceError(with output: Output) -> Publishers.ReplaceError<Self> {
    Publishers.ReplaceError(upstream: self) { completion in
      switch completion {
      case .finished: .finish(.finished)
      case .failure: .finishWith(output)
      }
    }
  }
}

extension Publishers {
  /// A publisher that replaces any error from the upstream with an element, then finishes.
  public typealias ReplaceError<Upstream: Publisher> = CompletionHandoff<
    Upstream, Empty<Upstream.Output, Never>
  >
}
