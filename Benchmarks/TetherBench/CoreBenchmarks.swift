import Dispatch
import Foundation
import Streams
import Synchronization
import Tether

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An element of the 1,000-element array in `core.withlock-array1000` (and the file strategy's
/// `file.withlock-array1000`, which compares against it); alone, the value `core.read-struct`
/// reads.
struct BenchItem: Codable, Equatable, Sendable {
  var id: Int
  var name: String
  var count: Int
  var enabled: Bool
}

/// The 1,000 items both array scenarios start from.
func makeBenchItems() -> [BenchItem] {
  (0..<1_000).map { BenchItem(id: $0, name: "item \($0)", count: 0, enabled: $0 % 2 == 0) }
}

/// The `core.*` scenarios.
func coreBenchmarks() -> [Benchmark] {
  [
    Benchmark(
      "core.read", baseline: "baseline.observation-access",
      note: "target <= 1.5x; an Int-sized value: the Observation access, then two atomic loads",
      operations: 1_000_000
    ) { n in
      let shared = Shared<UInt64>(wrappedValue: 42, .inMemory("bench.read"))
      var sum: UInt64 = 0
      for _ in 0..<n { sum &+= shared.wrappedValue }
      return sum
    },
    Benchmark(
      "core.read-struct", baseline: "baseline.mutex-read",
      note: "a 4-field struct with a String: reads take the lock (no word-sized shortcut)",
      operations: 1_000_000
    ) { n in
      let shared = Shared(
        wrappedValue: BenchItem(id: 7, name: "seven", count: 42, enabled: true),
        .inMemory("bench.read-struct"))
      var sum: UInt64 = 0
      for _ in 0..<n { sum &+= UInt64(shared.wrappedValue.count) }
      return sum
    },
    Benchmark(
      "core.withlock", baseline: "baseline.mutex-increment", note: "target <= 3x",
      operations: 1_000_000
    ) { n in
      // Never read through `wrappedValue`, so Observation is not armed: no observers at all.
      let shared = Shared<UInt64>(wrappedValue: 0, .inMemory("bench.withlock"))
      for _ in 0..<n { shared.withLock { $0 &+= 1 } }
      return shared.withLock { $0 }
    },
    Benchmark(
      "core.withlock-observed", baseline: "baseline.mutex-increment",
      note: "value was read, so every change also notifies the Observation registrar",
      operations: 200_000
    ) { n in
      let shared = Shared<UInt64>(wrappedValue: 0, .inMemory("bench.withlock-observed"))
      _ = shared.wrappedValue
      for _ in 0..<n { shared.withLock { $0 &+= 1 } }
      return shared.withLock { $0 }
    },
    Benchmark(
      "core.update", baseline: "core.withlock",
      note: "in-memory update: the same withLock behind an async call", operations: 500_000
    ) { n in
      let shared = Shared<UInt64>(wrappedValue: 0, .inMemory("bench.update"))
      for _ in 0..<n { try await shared.update { $0 &+= 1 } }
      return shared.withLock { $0 }
    },
    Benchmark(
      "core.withlock-slow-save",
      note: "count, not ns: saves that reached a key whose saves take 5 ms, of 1,000 withLocks",
      custom: {
        let store = SlowSaveStore()
        let shared = Shared<UInt64>(wrappedValue: 0, SlowSaveKey(store: store))
        for _ in 0..<1_000 { shared.withLock { $0 &+= 1 } }
        let deadline = ContinuousClock.now + .seconds(30)
        while store.state.withLock({ $0.value }) != 1_000, ContinuousClock.now < deadline {
          try await Task.sleep(for: .milliseconds(1))
        }
        let (saves, value) = store.state.withLock { ($0.saves, $0.value) }
        FileHandle.standardError.write(
          Data(
            ("core.withlock-slow-save: 1,000 withLocks, \(saves) saves reached the key, "
              + "stored \(value)\n").utf8))
        return (Double(saves), value)
      }),
    Benchmark(
      "core.load-rekey", note: "target <= 2000 ns; re-point a holder at an existing key",
      operations: 100_000
    ) { n in
      let keys = ["bench.rekey-a", "bench.rekey-b"]
      let values = keys.map { Shared<UInt64>(wrappedValue: 1, .inMemory($0)) }
      let holder = Shared<UInt64>(wrappedValue: 0, .inMemory(keys[0]))
      var sum: UInt64 = 0
      for i in 0..<n {
        try await holder.load(.inMemory(keys[(i + 1) % 2]))
        sum &+= holder.wrappedValue
      }
      withExtendedLifetime(values) {}
      return sum
    },
    Benchmark(
      "core.read-rekeyed", baseline: "baseline.mutex-read",
      note: "a holder after load(_:): reads go through its lock", operations: 1_000_000
    ) { n in
      let shared = Shared<UInt64>(wrappedValue: 42, .inMemory("bench.read-rekeyed-a"))
      let other = Shared<UInt64>(wrappedValue: 43, .inMemory("bench.read-rekeyed-b"))
      try await shared.load(.inMemory("bench.read-rekeyed-b"))
      var sum: UInt64 = 0
      for _ in 0..<n { sum &+= shared.wrappedValue }
      return sum &+ other.wrappedValue
    },
    sinks(1, operations: 500_000),
    sinks(10, operations: 200_000),
    sinks(100, operations: 20_000),
    Benchmark(
      "core.create-existing", note: "target <= 1000 ns", operations: 200_000
    ) { n in
      let holder = Shared<UInt64>(wrappedValue: 1, .inMemory("bench.existing"))
      var sum: UInt64 = 0
      for _ in 0..<n {
        sum &+= Shared<UInt64>(wrappedValue: 0, .inMemory("bench.existing")).wrappedValue
      }
      return sum &+ holder.wrappedValue
    },
    Benchmark("core.create-new", note: "target <= 3000 ns") {
      // Fresh names in a fresh scope, so every creation makes a new reference.
      let names = (0..<10_000).map { "bench.new.\($0)" }
      return withSharedStorage(.isolated) {
        let clock = ContinuousClock()
        var sum: UInt64 = 0
        let elapsed = clock.measure {
          for name in names {
            sum &+= Shared<UInt64>(wrappedValue: 1, .inMemory(name)).wrappedValue
          }
        }
        return (Double(elapsed.nanoseconds) / Double(names.count), sum)
      }
    },
    // The memory a live holder of a new `.inMemory` Int key costs: the heap bytes in use (every
    // malloc arena, plus mmapped blocks; mallinfo2 on Linux) after creating 100,000 holders of
    // fresh keys in a fresh isolated scope, minus the bytes in use before, per holder. The key
    // names and the array that keeps the holders alive (its 100,000 slots) are allocated before
    // the first reading, so the figure is what creating a key and its holder allocates: the
    // reference, its registry entry, the holder and the key's identity. The holders are read
    // only after the second reading: a reference makes its Observation registrar on its first
    // read (about 160 bytes more). Reported in bytes, in the median column. (swift-sharing's
    // `@Shared(.inMemory)` measured the same way: 1,284.)
    Benchmark("core.bytes-per-shared", note: "bytes per live holder, not ns; target <= 600") {
      let count = 100_000
      let names = (0..<count).map { "bench.bytes.\($0)" }
      return withSharedStorage(.isolated) {
        var holders: [Shared<Int>] = []
        holders.reserveCapacity(count)
        let before = heapBytesInUse()
        for name in names { holders.append(Shared(wrappedValue: 1, .inMemory(name))) }
        let after = heapBytesInUse()
        let checksum = holders.reduce(UInt64(0)) { $0 &+ UInt64($1.wrappedValue) }
        return (Double(after - before) / Double(count), checksum)
      }
    },
    Benchmark(
      "core.withlock-array1000", note: "1,000 Codable+Equatable structs, in memory",
      operations: 20_000
    ) { n in
      let shared = Shared(wrappedValue: makeBenchItems(), .inMemory("bench.array1000"))
      for i in 0..<n { shared.withLock { $0[i % 1_000].count &+= 1 } }
      return shared.withLock { UInt64($0.reduce(0) { $0 + $1.count }) }
    },
  ]
}

/// `withLock` increments with `count` publisher sinks attached.
private func sinks(_ count: Int, operations: Int) -> Benchmark {
  Benchmark(
    "core.withlock-sinks-\(count)", baseline: "core.withlock",
    note: "target <= withlock + \(count * 60) ns (60 ns per sink)", operations: operations
  ) { n in
    let shared = Shared<UInt64>(wrappedValue: 0, .inMemory("bench.sinks-\(count)"))
    let total = SinkTotal()
    let cancellables = (0..<count).map { _ in shared.publisher.sink { total.add($0) } }
    for _ in 0..<n { shared.withLock { $0 &+= 1 } }
    withExtendedLifetime(cancellables) {}
    return total.sum &+ shared.withLock { $0 }
  }
}

/// What the sinks add up; touched only by the value's single drainer, one call at a time.
private final class SinkTotal: @unchecked Sendable {
  // @unchecked: the sinks of one Shared are called by its drainer, never concurrently, and
  // the benchmark reads `sum` only after the last withLock returned on the same thread.
  var sum: UInt64 = 0
  func add(_ value: UInt64) { sum &+= value }
}

/// The bytes the allocator has handed out and not had back (every arena, and mmapped blocks):
/// `core.bytes-per-shared`'s meter.
///
/// Swift's Glibc module leaves out `malloc.h`, so `mallinfo2` cannot be called; glibc's
/// `malloc_stats` (found with `dlsym`, a plain `void (void)` function) prints the same totals
/// to standard error, which is pointed at a temporary file while it runs.
private func heapBytesInUse() -> Int {
  #if canImport(Glibc)
  guard let symbol = dlsym(nil, "malloc_stats") else { return 0 }
  let mallocStats = unsafeBitCast(symbol, to: (@convention(c) () -> Void).self)
  var template = Array("/tmp/tether-bench-malloc-XXXXXX".utf8CString)
  let file = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
  guard file >= 0 else { return 0 }
  defer { close(file) }
  template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
  let standardError = dup(STDERR_FILENO)
  dup2(file, STDERR_FILENO)
  mallocStats()
  dup2(standardError, STDERR_FILENO)
  close(standardError)
  lseek(file, 0, SEEK_SET)
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 4_096)
  while true {
    let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
    guard count > 0 else { break }
    bytes += buffer[0..<count]
  }
  // The last `in use bytes` line is the total over every arena, mmapped blocks included.
  let total = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
    .last { $0.hasPrefix("in use bytes") }
  return total.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
  #elseif canImport(Darwin)
  var statistics = malloc_statistics_t()
  malloc_zone_statistics(nil, &statistics)
  return Int(statistics.size_in_use)
  #else
  return 0
  #endif
}

/// The store of `core.withlock-slow-save`: a value, its revision, and how many saves reached it.
final class SlowSaveStore: Sendable {
  let state = Mutex<(value: UInt64, revision: Int, saves: Int)>((0, 0, 0))
  let queue = DispatchQueue(label: "SlowSaveStore")
}

/// A key whose every save takes 5 ms (written on the store's queue, then resumed with the
/// revision it wrote); each instance is its own value.
struct SlowSaveKey: SharedKey {
  let store: SlowSaveStore
  var id: ObjectIdentifier { ObjectIdentifier(store) }

  func load(context: LoadContext<UInt64>, continuation: LoadContinuation<UInt64>) {
    continuation.resumeReturningInitialValue(version: .absent)
  }

  func subscribe(
    context: LoadContext<UInt64>, subscriber: SharedSubscriber<UInt64>
  ) -> SharedSubscription { SharedSubscription {} }

  func save(_ value: UInt64, context: SaveContext, continuation: SaveContinuation) {
    store.queue.asyncAfter(deadline: .now() + .milliseconds(5)) { [store] in
      let revision = store.state.withLock { state -> Int in
        state.value = value
        state.revision += 1
        state.saves += 1
        return state.revision
      }
      continuation.resume(version: SharedVersion(revision))
    }
  }
}
