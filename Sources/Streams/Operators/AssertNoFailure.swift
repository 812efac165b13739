extension Publisher {
  /// Stops the program if the upstream fails, with a message naming the error, `prefix`, and
  /// where it was called; republishes elements unchanged.
  ///
  /// Use it where a failure is a programming error, to get a `Never`-failing publisher.
  @inlinable public func assertNoFailure(
    _ prefix: String = "", file: StaticString = #file, line: UInt = #line
  ) -> Publishers.MapError<Self, Never> {
    mapError { error -> Never in
      fatalError(
        "\(prefix)\(prefix.isEmpty ? "" : ": ")unexpected failure: \(error)", file: file, line: line
      )
    }
  }
}
