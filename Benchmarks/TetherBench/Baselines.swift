import Synchronization

/// The yardsticks other scenarios are compared with.
func baselineBenchmarks() -> [Benchmark] {
  [
    Benchmark("baseline.mutex-read", operations: 1_000_000) { n in
      let mutex = Mutex<UInt64>(42)
      var sum: UInt64 = 0
      for _ in 0..<n { sum &+= mutex.withLock { $0 } }
      return sum
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
