extension Publisher {
  /// Decodes each element with `decoder`, Combine's `decode(type:decoder:)`: a failure to
  /// decode fails the stream with the decoder's error and cancels upstream.
  ///
  /// ```swift
  /// struct Todo: Decodable { let title: String }
  /// let todos = responses.map(\.body).decode(type: Todo.self, decoder: JSONDecoder())
  /// ```
  public func decode<Item: Decodable, Coder: TopLevelDecoder>(
    type: Item.Type, decoder: Coder
  ) -> Publishers.Decode<Self, Item, Coder> where Output == Coder.Input {
    Publishers.Decode(upstream: self, decoder: decoder)
  }
}

extension Publishers {
  /// A publisher that decodes its upstream's elements with a ``TopLevelDecoder``.
  public struct Decode<Upstream: Publisher, Output: Decodable, Coder: TopLevelDecoder>: Publisher,
    CustomStringConvertible
  where Upstream.Output == Coder.Input {
    /// The operator fails with the upstream's error or the decoder's.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The decoder each element goes through; it is called on the delivering thread, for one
    /// element at a time per subscription.
    public let decoder: Coder

    /// Creates a publisher that decodes `upstream`'s elements with `decoder`.
    public init(upstream: Upstream, decoder: Coder) {
      self.upstream = upstream
      self.decoder = decoder
    }

    /// `Decode`, the operator's name.
    public var description: String { "Decode" }

    /// Attaches the subscriber behind a stage that decodes each element.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let decoder = decoder
      Publishers.TryElementOperator<Upstream, Output>(upstream: upstream) {
        { try decoder.decode(Output.self, from: $0) }
      }
      .subscribe(subscriber)
    }
  }
}
