import Dispatch

extension DispatchQueue: Scheduler {
  /// The scheduler time type used by the dispatch queue: a wrapper around `DispatchTime`.
  public struct SchedulerTimeType: Strideable, Codable, Hashable, Sendable {
    /// The dispatch time represented by this type.
    public var dispatchTime: DispatchTime

    /// Creates a dispatch queue time type instance.
    public init(_ time: DispatchTime) {
      dispatchTime = time
    }

    /// Returns the distance to another dispatch queue time.
    public func distance(to other: SchedulerTimeType) -> Stride {
      let start = dispatchTime.uptimeNanoseconds
      let end = other.dispatchTime.uptimeNanoseconds
      if end >= start {
        return .nanoseconds(Int(clamping: end - start))
      }
      return .nanoseconds(-Int(clamping: start - end))
    }

    /// Returns a dispatch queue scheduler time calculated by advancing this instance's time by
    /// the given interval. The result saturates instead of overflowing.
    public func advanced(by n: Stride) -> SchedulerTimeType {
      let start = dispatchTime.uptimeNanoseconds
      let nanoseconds: UInt64
      if n.magnitude >= 0 {
        let (sum, overflow) = start.addingReportingOverflow(UInt64(n.magnitude))
        nanoseconds = overflow ? .max : sum
      } else {
        let decrement = UInt64(n.magnitude.magnitude)
        nanoseconds = decrement >= start ? 1 : start - decrement
      }
      return SchedulerTimeType(DispatchTime(uptimeNanoseconds: nanoseconds))
    }

    /// Hashes the dispatch time.
    public func hash(into hasher: inout Hasher) {
      hasher.combine(dispatchTime.uptimeNanoseconds)
    }

    /// Two times are equal when they denote the same instant.
    public static func == (lhs: SchedulerTimeType, rhs: SchedulerTimeType) -> Bool {
      lhs.dispatchTime.uptimeNanoseconds == rhs.dispatchTime.uptimeNanoseconds
    }

    /// Orders times by instant.
    public static func < (lhs: SchedulerTimeType, rhs: SchedulerTimeType) -> Bool {
      lhs.dispatchTime.uptimeNanoseconds < rhs.dispatchTime.uptimeNanoseconds
    }

    /// Decodes a time from its uptime in nanoseconds.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      self.init(DispatchTime(uptimeNanoseconds: try container.decode(UInt64.self)))
    }

    /// Encodes the time as its uptime in nanoseconds.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.singleValueContainer()
      try container.encode(dispatchTime.uptimeNanoseconds)
    }

    /// A type that represents the distance between two values, in nanoseconds.
    ///
    /// Integer and floating-point literals denote seconds, as in Combine.
    public struct Stride: SchedulerTimeIntervalConvertible, Comparable, SignedNumeric,
      ExpressibleByFloatLiteral, Hashable, Codable, Sendable
    {
      /// If created via floating point literal, the value is converted to nanoseconds via
      /// multiplication.
      public typealias FloatLiteralType = Double
      /// Nanoseconds, same as `DispatchTimeInterval.nanoseconds`.
      public typealias IntegerLiteralType = Int
      /// The value of this time interval in nanoseconds.
      public typealias Magnitude = Int

      /// The value of this time interval in nanoseconds.
      public var magnitude: Int

      /// A `DispatchTimeInterval` created with the value of this type in nanoseconds.
      public var timeInterval: DispatchTimeInterval { .nanoseconds(magnitude) }

      /// Creates a stride from a dispatch time interval; `.never` is the largest stride.
      public init(_ timeInterval: DispatchTimeInterval) {
        switch timeInterval {
        case .seconds(let s): magnitude = s.multipliedSaturating(by: 1_000_000_000)
        case .milliseconds(let ms): magnitude = ms.multipliedSaturating(by: 1_000_000)
        case .microseconds(let us): magnitude = us.multipliedSaturating(by: 1_000)
        case .nanoseconds(let ns): magnitude = ns
        case .never: magnitude = .max
        @unknown default: magnitude = .max
        }
      }

      /// Creates a stride from a number of seconds.
      public init(_ timeInterval: Double) {
        let nanoseconds = (timeInterval * 1_000_000_000).rounded()
        if nanoseconds >= Double(Int.max) {
          magnitude = .max
        } else if nanoseconds <= Double(Int.min) {
          magnitude = .min
        } else {
          magnitude = Int(nanoseconds)
        }
      }

      /// Creates a stride from a floating-point literal, in seconds.
      public init(floatLiteral value: Double) {
        self.init(value)
      }

      /// Creates a stride from an integer literal, in seconds.
      public init(integerLiteral value: Int) {
        self.init(.seconds(value))
      }

      /// Creates a stride of exactly `source` nanoseconds, if it fits.
      public init?<T: BinaryInteger>(exactly source: T) {
        guard let value = Int(exactly: source) else { return nil }
        magnitude = value
      }

      /// Returns a stride of the given number of seconds.
      public static func seconds(_ s: Int) -> Stride { Stride(.seconds(s)) }
      /// Returns a stride of the given number of seconds.
      public static func seconds(_ s: Double) -> Stride { Stride(s) }
      /// Returns a stride of the given number of milliseconds.
      public static func milliseconds(_ ms: Int) -> Stride { Stride(.milliseconds(ms)) }
      /// Returns a stride of the given number of microseconds.
      public static func microseconds(_ us: Int) -> Stride { Stride(.microseconds(us)) }
      /// Returns a stride of the given number of nanoseconds.
      public static func nanoseconds(_ ns: Int) -> Stride { Stride(.nanoseconds(ns)) }

      /// Orders strides by length.
      public static func < (lhs: Stride, rhs: Stride) -> Bool { lhs.magnitude < rhs.magnitude }

      /// Adds two strides, saturating.
      public static func + (lhs: Stride, rhs: Stride) -> Stride {
        Stride(.nanoseconds(lhs.magnitude.addingSaturating(rhs.magnitude)))
      }
      /// Subtracts two strides, saturating.
      public static func - (lhs: Stride, rhs: Stride) -> Stride {
        let (difference, overflow) = lhs.magnitude.subtractingReportingOverflow(rhs.magnitude)
        return Stride(.nanoseconds(overflow ? (rhs.magnitude < 0 ? .max : .min) : difference))
      }
      /// Multiplies the nanosecond counts of two strides, saturating.
      public static func * (lhs: Stride, rhs: Stride) -> Stride {
        Stride(.nanoseconds(lhs.magnitude.multipliedSaturating(by: rhs.magnitude)))
      }
      /// Adds and assigns.
      public static func += (lhs: inout Stride, rhs: Stride) { lhs = lhs + rhs }
      /// Subtracts and assigns.
      public static func -= (lhs: inout Stride, rhs: Stride) { lhs = lhs - rhs }
      /// Multiplies and assigns.
      public static func *= (lhs: inout Stride, rhs: Stride) { lhs = lhs * rhs }
    }
  }

  /// Options that affect the operation of the dispatch queue scheduler.
  public struct SchedulerOptions: Sendable {
    /// The dispatch queue quality of service.
    public var qos: DispatchQoS
    /// The dispatch queue work item flags.
    public var flags: DispatchWorkItemFlags {
      get { DispatchWorkItemFlags(rawValue: flagsRawValue) }
      set { flagsRawValue = newValue.rawValue }
    }
    // `DispatchWorkItemFlags` is not marked `Sendable` in swift-corelibs-libdispatch, but its
    // raw value is a plain integer.
    private var flagsRawValue: UInt
    /// The dispatch group, if any, that should be used for performing actions.
    public var group: DispatchGroup?

    /// Creates dispatch queue scheduler options.
    public init(
      qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [],
      group: DispatchGroup? = nil
    ) {
      self.qos = qos
      self.flagsRawValue = flags.rawValue
      self.group = group
    }
  }

  /// The current moment of the dispatch clock.
  public var now: SchedulerTimeType { SchedulerTimeType(.now()) }

  /// The minimum tolerance allowed by the scheduler: zero.
  public var minimumTolerance: SchedulerTimeType.Stride { .nanoseconds(0) }

  /// Submits the action to the queue, asynchronously.
  public func schedule(options: SchedulerOptions?, _ action: @escaping @Sendable () -> Void) {
    let options = options ?? SchedulerOptions()
    async(group: options.group, qos: options.qos, flags: options.flags, execute: action)
  }

  /// Submits the action to the queue at `date`.
  public func schedule(
    after date: SchedulerTimeType,
    tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?,
    _ action: @escaping @Sendable () -> Void
  ) {
    let options = options ?? SchedulerOptions()
    asyncAfter(
      deadline: date.dispatchTime, qos: options.qos, flags: options.flags, execute: action)
  }

  /// Runs the action on the queue at `date`, then every `interval` until cancelled, using a
  /// dispatch timer source.
  public func schedule(
    after date: SchedulerTimeType,
    interval: SchedulerTimeType.Stride,
    tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?,
    _ action: @escaping @Sendable () -> Void
  ) -> any Cancellable {
    let timer = DispatchSource.makeTimerSource(queue: self)
    timer.setEventHandler(
      qos: options?.qos ?? .unspecified, flags: options?.flags ?? [], handler: action)
    timer.schedule(
      deadline: date.dispatchTime, repeating: interval.timeInterval,
      leeway: Swift.max(tolerance, minimumTolerance).timeInterval)
    timer.resume()
    return DispatchTimerCancellable(timer)
  }
}

/// Cancels a repeating dispatch timer.
// @unchecked Sendable: `timer` is immutable and a dispatch source is internally synchronised
// by libdispatch (its lock makes `cancel()` safe and idempotent from any thread); the source
// types are just not annotated `Sendable` in swift-corelibs-libdispatch.
final class DispatchTimerCancellable: Cancellable, @unchecked Sendable {
  private let timer: any DispatchSourceTimer

  init(_ timer: any DispatchSourceTimer) {
    self.timer = timer
  }

  deinit { timer.cancel() }

  func cancel() {
    timer.cancel()
  }
}

extension Int {
  fileprivate func multipliedSaturating(by other: Int) -> Int {
    let (product, overflow) = multipliedReportingOverflow(by: other)
    if !overflow { return product }
    return (self < 0) == (other < 0) ? .max : .min
  }

  fileprivate func addingSaturating(_ other: Int) -> Int {
    let (sum, overflow) = addingReportingOverflow(other)
    if !overflow { return sum }
    return other < 0 ? .min : .max
  }
}
