import Observation
import Synchronization

/// A subject for `baseline.observation-access`.
private final class AccessSubject: Observable, Sendable {
  static let value: KeyPath<AccessSubject, Int> & Sendable = \.value
  var value: Int { 0 }
}

/// The yardsticks other scenarios are compared with.
func baselineBenchmarks() -> [Benchmark] {
  [
    Benchmark("baseline.mutex-read", operations: 1_000_000) { n in
      let mutex = Mutex<UInt64>(42)
      var sum: UInt64 = 0
      for _ in 0..<n { sum &+= mutex.withLock { $0 } }
      return sum
    },
    Benchmark(
      "baseline.observation-access", baseline: "baseline.mutex-read",
      note: "ObservationRegistrar.access, no tracking: the part of core.read Tether cannot skip",
      operations: 1_000_000
    ) { n in
      let registrar = ObservationRegistrar()
      let subject = AccessSubject()
      for _ in 0..<n { registrar.access(subject, keyPath: AccessSubject.value) }
      return UInt64(n)
    },
    Benchmark("baseline.mutex-increment", operations: 1_000_000) { n in
      let mutex = Mutex<UInt64>(0)
      for _ in 0..<n { mutex.withLock { $0 &+= 1 } }
      return mutex.withLock { $0 }
    },
    Benchmark("baseline.asyncstream", operations: 100_000) { n in
      let (stream, continuation) = AsyncStream<UInt64>.makeStream()
      var sum: UInt64 = 0
      var iterator = stream.makeAsyncIterator()
      for i in 0..<n {
        continuation.yield(UInt64(i))
        sum &+= await iterator.next() ?? 0
      }
      continuation.finish()
      return sum
    },
  ]
}
