import Foundation

extension OperationQueue {
  /// The time type of the operation queue and run loop schedulers: a `Date`, with strides in
  /// seconds (`TimeInterval`), as in Combine. `RunLoop.SchedulerTimeType` is the same type.
  public struct SchedulerTimeType: Strideable, Codable, Hashable, Sendable {
    /// The date this time represents.
    public var date: Date

    /// Creates a time from a date.
    public init(_ date: Date) { self.date = date }

    /// The interval from this time to `other`.
    public func distance(to other: SchedulerTimeType) -> Stride {
      Stride(other.date.timeIntervalSince(date))
    }

    /// This time advanced by `n`.
    public func advanced(by n: Stride) -> SchedulerTimeType {
      SchedulerTimeType(date.addingTimeInterval(n.magnitude))
    }

    /// A scheduler interval, in seconds.
    ///
    /// Integer and floating-point literals denote seconds.
    public struct Stride: SchedulerTimeIntervalConvertible, Comparable, SignedNumeric,
      ExpressibleByFloatLiteral, Hashable, Codable, Sendable
    {
      /// Literals are seconds.
      public typealias FloatLiteralType = TimeInterval
      /// Literals are seconds.
      public typealias IntegerLiteralType = TimeInterval
      /// The interval in seconds.
      public typealias Magnitude = TimeInterval

      /// The interval in seconds.
      public var magnitude: TimeInterval

      /// The interval in seconds.
      public var timeInterval: TimeInterval { magnitude }

      /// Creates an interval of `timeInterval` seconds.
      public init(_ timeInterval: TimeInterval) { magnitude = timeInterval }

      /// Creates an interval from a literal number of seconds.
      public init(floatLiteral value: TimeInterval) { magnitude = value }

      /// Creates an interval from a literal number of seconds.
      public init(integerLiteral value: TimeInterval) { magnitude = value }

      /// Creates an interval of `source` seconds, if it is exactly representable.
      public init?<T: BinaryInteger>(exactly source: T) {
        guard let value = TimeInterval(exactly: source) else { return nil }
        magnitude = value
      }

      /// Orders intervals by length.
      public static func < (lhs: Stride, rhs: Stride) -> Bool { lhs.magnitude < rhs.magnitude }
      /// Multiplies two intervals.
      public static func * (lhs: Stride, rhs: Stride) -> Stride {
        Stride(lhs.magnitude * rhs.magnitude)
      }
      /// Adds two intervals.
      public static func + (lhs: Stride, rhs: Stride) -> Stride {
        Stride(lhs.magnitude + rhs.magnitude)
      }
      /// Subtracts two intervals.
      public static func - (lhs: Stride, rhs: Stride) -> Stride {
        Stride(lhs.magnitude - rhs.magnitude)
      }
      /// Multiplies and assigns.
      public static func *= (lhs: inout Stride, rhs: Stride) { lhs = lhs * rhs }
      /// Adds and assigns.
      public static func += (lhs: inout Stride, rhs: Stride) { lhs = lhs + rhs }
      /// Subtracts and assigns.
      public static func -= (lhs: inout Stride, rhs: Stride) { lhs = lhs - rhs }

      /// An interval of `s` seconds.
      public static func seconds(_ s: Int) -> Stride { Stride(TimeInterval(s)) }
      /// An interval of `s` seconds.
      public static func seconds(_ s: Double) -> Stride { Stride(s) }
      /// An interval of `ms` milliseconds.
      public static func milliseconds(_ ms: Int) -> Stride { Stride(TimeInterval(ms) / 1e3) }
      /// An interval of `us` microseconds.
      public static func microseconds(_ us: Int) -> Stride { Stride(TimeInterval(us) / 1e6) }
      /// An interval of `ns` nanoseconds.
      public static func nanoseconds(_ ns: Int) -> Stride { Stride(TimeInterval(ns) / 1e9) }
    }
  }
}
