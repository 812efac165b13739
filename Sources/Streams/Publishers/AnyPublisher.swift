/// A publisher that performs type erasure by wrapping another publisher.
///
/// Use ``Publisher/eraseToAnyPublisher()`` to hide an operator chain's type behind an API
/// boundary. Subscribing to an `AnyPublisher` subscribes to the wrapped publisher directly,
/// adding no stage to the stream.
public struct AnyPublisher<Output, Failure: Error>: Publisher, CustomStringConvertible {
  private let box: PublisherBoxBase<Output, Failure>

  /// Creates a type-erasing publisher that wraps the given publisher.
  public init<P: Publisher>(_ publisher: P) where P.Output == Output, P.Failure == Failure {
    if let erased = publisher as? AnyPublisher<Output, Failure> {
      box = erased.box
    } else {
      box = PublisherBox(publisher)
    }
  }

  /// A textual representation: `AnyPublisher`.
  public var description: String { "AnyPublisher" }

  /// Attaches the subscriber to the wrapped publisher.
  public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
    box.receive(subscriber: subscriber)
  }
}

extension Publisher {
  /// Wraps this publisher in an ``AnyPublisher``.
  public func eraseToAnyPublisher() -> AnyPublisher<Output, Failure> {
    AnyPublisher(self)
  }
}

private class PublisherBoxBase<Output, Failure: Error> {
  func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
    fatalError("abstract")
  }
}

private final class PublisherBox<P: Publisher>: PublisherBoxBase<P.Output, P.Failure> {
  let publisher: P

  init(_ publisher: P) { self.publisher = publisher }

  override func receive<S: Subscriber>(subscriber: S)
  where S.Input == P.Output, S.Failure == P.Failure {
    publisher.receive(subscriber: subscriber)
  }
}
