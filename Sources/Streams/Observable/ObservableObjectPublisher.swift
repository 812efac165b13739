/// The publisher of an ``ObservableObject``'s `objectWillChange`: it sends `()` before each
/// change.
///
/// A class with `@Published` properties gets one synthesized; `send()` it yourself for changes
/// to state that is not `@Published`. `send()` may be called from any thread; each subscriber
/// receives the signals in order, on the thread that sent them (a `sink` written in
/// `@MainActor` code receives them on the main actor).
public final class ObservableObjectPublisher: Publisher, Sendable {
  /// The publisher sends no value, only the signal that a change is coming.
  public typealias Output = Void
  /// The publisher never fails.
  public typealias Failure = Never

  private let subject = PassthroughSubject<Void, Never>()

  /// Creates a publisher that sends when you call ``send()``.
  public init() {}

  /// Attaches the subscriber; it receives the signals sent after it subscribed, while it has
  /// demand.
  public func receive<S: Subscriber>(subscriber: S) where S.Input == Void, S.Failure == Never {
    subject.subscribe(subscriber)
  }

  /// Tells every subscriber that the object is about to change.
  public func send() {
    subject.send(())
  }
}
