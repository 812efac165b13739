import Synchronization

/// One benchmark scenario: an id such as `streams.subject-sink`, the baseline it is compared
/// with (another scenario's id, measured in the same run), and how to measure it.
struct Benchmark: Sendable {
  enum Measure: Sendable {
    /// Runs `body(n)` and times it; the sample is the elapsed time divided by `n`, in
    /// nanoseconds per operation. The body returns a checksum so the work cannot be removed.
    case perOperation(operations: Int, body: @Sendable (Int) async throws -> UInt64)
    /// As `perOperation`, but the clock runs only from the body's `start()` call: for
    /// scenarios whose setup (a server, a registration, a first full answer) is not part of
    /// the steady-state operation they measure.
    case perOperationAfterSetup(
      operations: Int, body: @Sendable (Int, Stopwatch) async throws -> UInt64)
    /// Returns one sample per call, already in the unit of the ns column (nanoseconds, or a
    /// count for scenarios that count events), plus a checksum.
    case custom(body: @Sendable () async throws -> (sample: Double, checksum: UInt64))
  }

  let id: String
  let baseline: String?
  let measure: Measure
  /// Extra text printed after the row, such as the target the issue names.
  let note: String

  init(
    _ id: String, baseline: String? = nil, note: String = "", operations: Int,
    body: @escaping @Sendable (Int) async throws -> UInt64
  ) {
    self.id = id
    self.baseline = baseline
    self.note = note
    self.measure = .perOperation(operations: operations, body: body)
  }

  init(
    _ id: String, baseline: String? = nil, note: String = "", operations: Int,
    afterSetup body: @escaping @Sendable (Int, Stopwatch) async throws -> UInt64
  ) {
    self.id = id
    self.baseline = baseline
    self.note = note
    self.measure = .perOperationAfterSetup(operations: operations, body: body)
  }

  init(
    _ id: String, baseline: String? = nil, note: String = "",
    custom body: @escaping @Sendable () async throws -> (sample: Double, checksum: UInt64)
  ) {
    self.id = id
    self.baseline = baseline
    self.note = note
    self.measure = .custom(body: body)
  }
}

/// Where a `perOperationAfterSetup` body starts the clock (right before its loop) and stops
/// it (right after, before its teardown).
final class Stopwatch: Sendable {
  private let marks = Mutex<(started: ContinuousClock.Instant?, stopped: ContinuousClock.Instant?)>(
    (nil, nil))

  var started: ContinuousClock.Instant? { marks.withLock { $0.started } }
  var stopped: ContinuousClock.Instant? { marks.withLock { $0.stopped } }

  func start() {
    let now = ContinuousClock.now
    marks.withLock { $0.started = now }
  }

  func stop() {
    let now = ContinuousClock.now
    marks.withLock { $0.stopped = now }
  }
}
