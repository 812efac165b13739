extension Subscribers {
  /// A requested number of items, sent to a publisher from a subscriber through its subscription.
  ///
  /// Demand is either a finite count (``max(_:)``, ``none``) or ``unlimited``. Arithmetic
  /// saturates: adding to `.unlimited` stays `.unlimited`, and subtracting never goes below zero.
  public struct Demand: Equatable, Comparable, Hashable, Sendable, CustomStringConvertible {
    @usableFromInline internal let rawValue: UInt

    @inlinable internal init(rawValue: UInt) {
      self.rawValue = min(UInt(Int.max) + 1, rawValue)
    }

    /// A request for as many values as the publisher can produce.
    @inlinable public static var unlimited: Demand { Demand(rawValue: UInt(Int.max) + 1) }
    /// A request for no elements from the publisher.
    @inlinable public static var none: Demand { Demand(rawValue: 0) }

    /// A request for a maximum number of elements. `value` must not be negative.
    @inlinable public static func max(_ value: Int) -> Demand {
      precondition(value >= 0, "demand cannot be negative")
      return Demand(rawValue: UInt(value))
    }

    /// The number of requested values, or `nil` if unlimited.
    @inlinable public var max: Int? {
      self == .unlimited ? nil : Int(rawValue)
    }

    /// A textual representation: `unlimited` or `max(n)`.
    public var description: String {
      self == .unlimited ? "unlimited" : "max(\(rawValue))"
    }

    /// Adds two demands; anything plus `.unlimited` is `.unlimited`.
    @inlinable public static func + (lhs: Demand, rhs: Demand) -> Demand {
      if lhs == .unlimited || rhs == .unlimited { return .unlimited }
      let (sum, overflow) = lhs.rawValue.addingReportingOverflow(rhs.rawValue)
      return overflow ? .unlimited : Demand(rawValue: sum)
    }
    /// Adds an integer to a demand; a negative integer subtracts.
    @inlinable public static func + (lhs: Demand, rhs: Int) -> Demand {
      rhs < 0 ? lhs - .max(-rhs) : lhs + .max(rhs)
    }
    /// Adds and assigns.
    @inlinable public static func += (lhs: inout Demand, rhs: Demand) { lhs = lhs + rhs }
    /// Adds an integer and assigns.
    @inlinable public static func += (lhs: inout Demand, rhs: Int) { lhs = lhs + rhs }

    /// Subtracts a demand; `.unlimited` minus anything finite stays `.unlimited`,
    /// and the result never goes below `.none`.
    @inlinable public static func - (lhs: Demand, rhs: Demand) -> Demand {
      if lhs == .unlimited { return rhs == .unlimited ? .none : .unlimited }
      if rhs == .unlimited { return .none }
      return lhs.rawValue > rhs.rawValue ? Demand(rawValue: lhs.rawValue - rhs.rawValue) : .none
    }
    /// Subtracts an integer from a demand.
    @inlinable public static func - (lhs: Demand, rhs: Int) -> Demand {
      rhs < 0 ? lhs + .max(-rhs) : lhs - .max(rhs)
    }
    /// Subtracts and assigns.
    @inlinable public static func -= (lhs: inout Demand, rhs: Demand) { lhs = lhs - rhs }
    /// Subtracts an integer and assigns.
    @inlinable public static func -= (lhs: inout Demand, rhs: Int) { lhs = lhs - rhs }

    /// Multiplies a finite demand; `.unlimited` stays `.unlimited`.
    @inlinable public static func * (lhs: Demand, rhs: Int) -> Demand {
      precondition(rhs >= 0, "cannot multiply demand by a negative number")
      if lhs == .unlimited { return .unlimited }
      let (product, overflow) = lhs.rawValue.multipliedReportingOverflow(by: UInt(rhs))
      return overflow ? .unlimited : Demand(rawValue: product)
    }
    /// Multiplies and assigns.
    @inlinable public static func *= (lhs: inout Demand, rhs: Int) { lhs = lhs * rhs }

    /// Orders demands; `.unlimited` is greater than every finite demand.
    @inlinable public static func < (lhs: Demand, rhs: Demand) -> Bool {
      lhs.rawValue < rhs.rawValue
    }
    /// Compares a demand with an integer count.
    @inlinable public static func < (lhs: Demand, rhs: Int) -> Bool {
      lhs < .max(Swift.max(rhs, 0))
    }
    /// Compares a demand with an integer count.
    @inlinable public static func > (lhs: Demand, rhs: Int) -> Bool {
      lhs > .max(Swift.max(rhs, 0))
    }
    /// Compares a demand with an integer count.
    @inlinable public static func <= (lhs: Demand, rhs: Int) -> Bool { !(lhs > rhs) }
    /// Compares a demand with an integer count.
    @inlinable public static func >= (lhs: Demand, rhs: Int) -> Bool { !(lhs < rhs) }
    /// Compares a demand with an integer count.
    @inlinable public static func == (lhs: Demand, rhs: Int) -> Bool {
      rhs >= 0 && lhs == .max(rhs)
    }
  }
}
