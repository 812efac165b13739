import Streams
import Synchronization

/// The `streams.*` scenarios.
func streamsBenchmarks() -> [Benchmark] {
  [
    Benchmark(
      "streams.subject-sink", baseline: "baseline.mutex-increment",
      note: "target <= 60 ns/value", operations: 1_000_000
    ) { n in
      let subject = PassthroughSubject<UInt64, Never>()
      let total = BenchTotal()
      let cancellable = subject.sink { total.add($0) }
      for i in 0..<n { subject.send(UInt64(i)) }
      cancellable.cancel()
      return total.value
    },
    Benchmark(
      "streams.map-filter-sink", baseline: "streams.subject-sink",
      note: "target <= subject-sink + 15 ns/value", operations: 1_000_000
    ) { n in
      let subject = PassthroughSubject<UInt64, Never>()
      let total = BenchTotal()
      let cancellable = subject.map { $0 &* 3 }.filter { $0 & 1 == 0 }.sink { total.add($0) }
      for i in 0..<n { subject.send(UInt64(i)) }
      cancellable.cancel()
      return total.value
    },
    Benchmark(
      "streams.merge-sink", baseline: "streams.subject-sink",
      note: "two subjects merged into one sink, per value", operations: 1_000_000
    ) { n in
      let a = PassthroughSubject<UInt64, Never>()
      let b = PassthroughSubject<UInt64, Never>()
      let total = BenchTotal()
      let cancellable = a.merge(with: b).sink { total.add($0) }
      for i in 0..<n { (i & 1 == 0 ? a : b).send(UInt64(i)) }
      cancellable.cancel()
      return total.value
    },
    Benchmark(
      "streams.combinelatest-sink", baseline: "streams.subject-sink",
      note: "two subjects combined into one sink, per value", operations: 200_000
    ) { n in
      let a = PassthroughSubject<UInt64, Never>()
      let b = PassthroughSubject<UInt64, Never>()
      let total = BenchTotal()
      let cancellable = a.combineLatest(b).sink { total.add($0.0 &+ $0.1) }
      for i in 0..<n { (i & 1 == 0 ? a : b).send(UInt64(i)) }
      cancellable.cancel()
      return total.value
    },
    Benchmark(
      "streams.zip-sink", baseline: "streams.subject-sink",
      note: "two subjects zipped into one sink, per value", operations: 200_000
    ) { n in
      let a = PassthroughSubject<UInt64, Never>()
      let b = PassthroughSubject<UInt64, Never>()
      let total = BenchTotal()
      let cancellable = a.zip(b).sink { total.add($0.0 &+ $0.1) }
      for i in 0..<n { (i & 1 == 0 ? a : b).send(UInt64(i)) }
      cancellable.cancel()
      return total.value
    },
    Benchmark(
      "streams.flatmap-just-sink", baseline: "streams.subject-sink",
      note: "each value mapped to a Just and merged: one inner subscription per value",
      operations: 200_000
    ) { n in
      let subject = PassthroughSubject<UInt64, Never>()
      let total = BenchTotal()
      let cancellable = subject.flatMap { Just($0 &+ 1) }.sink { total.add($0) }
      for i in 0..<n { subject.send(UInt64(i)) }
      cancellable.cancel()
      return total.value
    },
    Benchmark(
      "streams.sequence-flatmap-merge-sink", baseline: "streams.subject-sink",
      note: "Publishers.Sequence([a, b]).flatMap { $0 } fed by two subjects, per value",
      operations: 1_000_000
    ) { n in
      let a = PassthroughSubject<UInt64, Never>()
      let b = PassthroughSubject<UInt64, Never>()
      let total = BenchTotal()
      let cancellable = Publishers.Sequence<[PassthroughSubject<UInt64, Never>], Never>(
        sequence: [a, b]
      ).flatMap { $0 }.sink { total.add($0) }
      for i in 0..<n { (i & 1 == 0 ? a : b).send(UInt64(i)) }
      cancellable.cancel()
      return total.value
    },
    Benchmark(
      "streams.switchtolatest-sink", baseline: "streams.subject-sink",
      note: "a new inner subject every 100 values, per value", operations: 1_000_000
    ) { n in
      let outer = PassthroughSubject<PassthroughSubject<UInt64, Never>, Never>()
      let total = BenchTotal()
      let cancellable = outer.switchToLatest().sink { total.add($0) }
      var inner = PassthroughSubject<UInt64, Never>()
      for i in 0..<n {
        if i % 100 == 0 {
          inner = PassthroughSubject()
          outer.send(inner)
        }
        inner.send(UInt64(i))
      }
      cancellable.cancel()
      return total.value
    },
    Benchmark(
      "streams.timer-tick", baseline: "streams.subject-sink",
      note: "Publishers.Interval on a TestScheduler into a sink, per tick (scheduler included)",
      operations: 200_000
    ) { n in
      let scheduler = TestScheduler()
      let total = BenchTotal()
      let cancellable = Publishers.Interval(every: .nanoseconds(1), scheduler: scheduler)
        .sink { _ in total.add(1) }
      scheduler.advance(by: .nanoseconds(n))
      cancellable.cancel()
      return total.value
    },
    Benchmark(
      "streams.chain12-subscribe-cancel", baseline: "baseline.mutex-increment",
      note: "target <= 5000 ns", operations: 20_000
    ) { n in
      let subject = PassthroughSubject<UInt64, Never>()
      // Twelve operators, the kind of chain an app builds: mostly stateless stages, a few
      // with state, one that tracks demand (replaceError).
      let first = subject.map { (value: UInt64) -> UInt64 in value &+ 1 }
        .filter { (value: UInt64) -> Bool in value > 0 }
        .compactMap { (value: UInt64) -> UInt64? in value }
      let second = first.removeDuplicates()
        .scan(UInt64(0)) { (sum: UInt64, value: UInt64) -> UInt64 in sum &+ value }
        .dropFirst(1)
      let third = second.prefix(Int.max)
        .handleEvents(receiveOutput: { (_: UInt64) in })
        .map { (value: UInt64) -> UInt64 in value &* 2 }
      let chain = third.filter { (value: UInt64) -> Bool in value & 1 == 0 }
        .setFailureType(to: BenchError.self)
        .replaceError(with: 0)
      var checksum: UInt64 = 0
      for _ in 0..<n {
        let cancellable = chain.sink { _ in }
        checksum &+= UInt64(subject.subscriberCount)
        cancellable.cancel()
      }
      return checksum
    },
    fanout(10),
    fanout(100),
    Benchmark(
      "streams.values", baseline: "baseline.asyncstream", note: "target <= 1.5x",
      operations: 100_000
    ) { n in
      let subject = PassthroughSubject<UInt64, Never>()
      var iterator = subject.values.makeAsyncIterator()
      var sum: UInt64 = 0
      for i in 0..<n {
        subject.send(UInt64(i))
        sum &+= await iterator.next() ?? 0
      }
      return sum
    },
  ]
}

/// One send to `count` sinks; the sample is the cost per delivered value.
private func fanout(_ count: Int) -> Benchmark {
  Benchmark(
    "streams.fanout-\(count)", baseline: "streams.subject-sink", note: "ns per delivered value",
    operations: 1_000_000
  ) { n in
    let subject = PassthroughSubject<UInt64, Never>()
    let total = BenchTotal()
    let cancellables = (0..<count).map { _ in subject.sink { total.add($0) } }
    for i in 0..<(n / count) { subject.send(UInt64(i)) }
    cancellables.forEach { $0.cancel() }
    return total.value
  }
}

private enum BenchError: Error { case never }

/// A checksum the sinks add to; calls into one sink are never concurrent, so relaxed
/// atomic adds are enough to keep the work from being optimised away.
private final class BenchTotal: Sendable {
  private let atomic = Atomic<UInt64>(0)
  func add(_ value: UInt64) { atomic.wrappingAdd(value, ordering: .relaxed) }
  var value: UInt64 { atomic.load(ordering: .relaxed) }
}
