extension Publisher {
  /// Publishes the given elements after this publisher finishes.
  @inlinable public func append(
    _ elements: Output...
  )
    -> Publishers.Concatenate<
      Self, Publishers.Sequence<[Output], Failure>
    >
  {
    append(elements)
  }

  /// Publishes the elements of a sequence after this publisher finishes.
  @inlinable public func append<S: Swift.Sequence>(
    _ elements: S
  )
    -> Publishers.Concatenate<
      Self, Publishers.Sequence<S, Failure>
    > where S.Element == Output
  {
    Publishers.Concatenate(prefix: self, suffix: Publishers.Sequence(sequence: elements))
  }

  /// Publishes another publisher's elements after this publisher finishes.
  @inlinable public func append<P: Publisher>(_ publisher: P) -> Publishers.Concatenate<Self, P>
  where P.Output == Output, P.Failure == Failure {
    Publishers.Concatenate(prefix: self, suffix: publisher)
  }
}
