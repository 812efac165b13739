extension Publisher {
  /// Publishes the given elements before this publisher's elements.
  @inlinable public func prepend(
    _ elements: Output...
  )
    -> Publishers.Concatenate<
      Publishers.Sequence<[Output], Failure>, Self
    >
  {
    prepend(elements)
  }

  /// Publishes the elements of a sequence before this publisher's elements.
  @inlinable public func prepend<S: Swift.Sequence>(
    _ elements: S
  )
    -> Publishers.Concatenate<
      Publishers.Sequence<S, Failure>, Self
    > where S.Element == Output
  {
    Publishers.Concatenate(prefix: Publishers.Sequence(sequence: elements), suffix: self)
  }

  /// Publishes another publisher's elements, until it finishes, before this publisher's.
  @inlinable public func prepend<P: Publisher>(_ publisher: P) -> Publishers.Concatenate<P, Self>
  where P.Output == Output, P.Failure == Failure {
    Publishers.Concatenate(prefix: publisher, suffix: self)
  }
}
