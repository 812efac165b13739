import Synchronization

/// A protocol representing the connection of a subscriber to a publisher.
///
/// A subscription is how a subscriber asks for values (``request(_:)``) and stops them
/// (``Cancellable/cancel()``). Both may be called from any thread; `cancel()` is
/// idempotent and nothing is delivered after it returns.
public protocol Subscription: Cancellable, CustomCombineIdentifierConvertible {
  /// Tells a publisher that it may send more values to the subscriber.
  func request(_ demand: Subscribers.Demand)
}

/// A type that provides an identifier for a stream participant.
public protocol CustomCombineIdentifierConvertible {
  /// A unique identifier for the publisher's streams participant.
  var combineIdentifier: CombineIdentifier { get }
}

extension CustomCombineIdentifierConvertible where Self: AnyObject {
  /// An identifier derived from the object's identity.
  public var combineIdentifier: CombineIdentifier { CombineIdentifier(self) }
}

/// A unique identifier for a stream participant.
public struct CombineIdentifier: Hashable, Sendable, CustomStringConvertible {
  private let rawValue: UInt

  /// Creates a unique identifier.
  public init() {
    rawValue = CombineIdentifier.counter.add(1, ordering: .relaxed).newValue
  }

  /// Creates an identifier from an object's identity.
  public init(_ object: AnyObject) {
    rawValue = UInt(bitPattern: ObjectIdentifier(object).hashValue)
  }

  /// The identifier as a hexadecimal string.
  public var description: String { "0x" + String(rawValue, radix: 16) }

  private static let counter = Atomic<UInt>(0)
}
