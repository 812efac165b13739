extension Benchmark {
  /// Runs `total` calls of `operation`, `width` at a time (a new call starts as each one
  /// ends); returns the sum of their results. The `*.concurrent-32` rows of `http` and `https`
  /// share it, so both keep the same number of requests in flight.
  static func inFlight(
    _ width: Int, total: Int, _ operation: @escaping @Sendable () async throws -> UInt64
  ) async throws -> UInt64 {
    try await withThrowingTaskGroup(of: UInt64.self) { group in
      var started = 0
      var sum: UInt64 = 0
      while started < min(width, total) {
        group.addTask(operation: operation)
        started += 1
      }
      while let value = try await group.next() {
        sum &+= value
        if started < total {
          group.addTask(operation: operation)
          started += 1
        }
      }
      return sum
    }
  }
}
