extension Publisher {
  /// Publishes the number of elements the upstream published, when it finishes.
  @inlinable public func count() -> Publishers.Reduce<Self, Int> {
    Publishers.Reduce(upstream: self, initial: 0) { result, _ in
      result! += 1
      return false
    }
  }
}
