extension Publisher where Output: Encodable {
  /// Encodes each element with `encoder`, Combine's `encode(encoder:)`: a failure to encode
  /// fails the stream with the encoder's error and cancels upstream.
  ///
  /// ```swift
  /// let bodies = drafts.encode(encoder: JSONEncoder())  // Data for each draft
  /// ```
  public func encode<Coder: TopLevelEncoder>(encoder: Coder) -> Publishers.Encode<Self, Coder> {
    Publishers.Encode(upstream: self, encoder: encoder)
  }
}

extension Publishers {
  /// A publisher that encodes its upstream's elements with a ``TopLevelEncoder``.
  public struct Encode<Upstream: Publisher, Coder: TopLevelEncoder>: Publisher,
    CustomStringConvertible
  where Upstream.Output: Encodable {
    /// The encoder's output for each element.
    public typealias Output = Coder.Output
    /// The operator fails with the upstream's error or the encoder's.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The encoder each element goes through; it is called on the delivering thread, for one
    /// element at a time per subscription.
    public let encoder: Coder

    /// Creates a publisher that encodes `upstream`'s elements with `encoder`.
    public init(upstream: Upstream, encoder: Coder) {
      self.upstream = upstream
      self.encoder = encoder
    }

    /// `Encode`, the operator's name.
    public var description: String { "Encode" }

    /// Attaches the subscriber behind a stage that encodes each element.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let encoder = encoder
      Publishers.TryElementOperator<Upstream, Output>(upstream: upstream) {
        { try encoder.encode($0) }
      }
      .subscribe(subscriber)
    }
  }
}
