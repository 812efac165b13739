extension Publishers {
  /// A publisher that emits all of one publisher's elements before those from another.
  ///
  /// `prepend` and `append` build it. The suffix is subscribed to when the prefix finishes
  /// and is asked for the demand the subscriber still had outstanding; if the prefix fails,
  /// the stream fails and the suffix is never subscribed to.
  public struct Concatenate<Prefix: Publisher, Suffix: Publisher>: Publisher
  where Prefix.Output == Suffix.Output, Prefix.Failure == Suffix.Failure {
    /// Concatenate publishes the prefix's elements, then the suffix's.
    public typealias Output = Suffix.Output
    /// Concatenate fails when either publisher fails.
    public typealias Failure = Suffix.Failure

    /// The publisher whose elements come first.
    public let prefix: Prefix
    /// The publisher whose elements follow once the prefix finishes.
    public let suffix: Suffix

    /// Creates a publisher that republishes `prefix`, then `suffix`.
    @inlinable public init(prefix: Prefix, suffix: Suffix) {
      self.prefix = prefix
      self.suffix = suffix
    }

    /// Attaches the subscriber to the prefix, then to the suffix.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let suffix = suffix
      prefix.subscribe(
        RelayStage(relay: DemandRelay(downstream: subscriber)) { completion, relay in
          guard case .finished = completion else { return relay.finish(completion) }
          relay.continueWith { suffix }
        })
    }
  }
}
