import Foundation
import Synchronization
@_spi(Diagnostics) import Tether

/// The `file.*` scenarios.
func fileBenchmarks() -> [Benchmark] {
  [
    // The caller's side of a mutation on a file-backed value: encoding and I/O happen on the
    // key's queue, so this should cost about what the same mutation costs in memory.
    Benchmark(
      "file.withlock-array1000", baseline: "core.withlock-array1000",
      note: "target <= 2x core.withlock-array1000 (the same mutation, in memory)",
      operations: 20_000
    ) { n in
      let shared = FileBenchFixtures.array1000
      var checksum: UInt64 = 0
      for i in 0..<n {
        checksum &+= UInt64(
          shared.withLock { items in
            items[i % 1_000].count &+= 1
            return items[i % 1_000].count
          })
      }
      return checksum
    },
    // 10,000 mutations inside one default (1 s) throttle window: how many times the file was
    // written. The first mutation writes at once, the rest coalesce into one trailing write.
    Benchmark("file.writes-per-10000", note: "file writes, not ns; target <= 3") {
      let url = FileBenchFixtures.directory.appendingPathComponent("writes-\(UUID()).json")
      let key: FileStorageKey<[Int]> = .fileStorage(url)
      let shared = Shared(wrappedValue: Array(repeating: 0, count: 100), key)
      let start = ContinuousClock.now
      for i in 0..<10_000 { shared.withLock { $0[i % 100] &+= 1 } }
      // Let the one-second window end and its trailing write land.
      try await Task.sleep(until: start + .milliseconds(1_500))
      let writes = key.writeCount
      try? FileManager.default.removeItem(at: url)
      return (Double(writes), UInt64(writes))
    },
    // The floor of an atomic file update: a temporary file in the same directory, the same
    // small bytes written, fsync, close, rename, by hand (no lock, no read, no coding).
    Benchmark("baseline.file-write-atomic", operations: 200) { n in
      let path = FileBenchFixtures.directory.appendingPathComponent("baseline-atomic.json").path
      var checksum: UInt64 = 0
      for i in 0..<n {
        let bytes = Array("\(i)".utf8)
        let temporary = "\(path).tmp-\(i)"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        precondition(descriptor >= 0, "baseline: cannot create \(temporary)")
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        fsync(descriptor)
        close(descriptor)
        rename(temporary, path)
        checksum &+= UInt64(bytes.count)
      }
      return checksum
    },
    // One `$counter.update { $0 += 1 }` on a file-backed Int: the file's lock (flock on the
    // sidecar), read and decode, transform, encode, the atomic write with fsync, unlock,
    // exact across processes.
    Benchmark(
      "file.update", baseline: "baseline.file-write-atomic",
      note: "target <= 1.5x baseline.file-write-atomic (the lock and read-back add little)",
      operations: 200
    ) { n in
      let counter = FileBenchFixtures.updateCounter
      var checksum: UInt64 = 0
      for _ in 0..<n {
        checksum &+= UInt64(
          try await counter.update {
            $0 += 1; return $0
          })
      }
      return checksum
    },
    // A write by another process (a `/bin/sh` writing a new value into the file in place)
    // until a subscribed key here has decoded and delivered it: inotify, read, decode, yield.
    Benchmark("file.propagation", note: "ns from write to observed; target median <= 10 ms") {
      try await FileBenchFixtures.propagation.measureOne()
    },
  ]
}

/// State the file scenarios keep across samples, created on first use.
enum FileBenchFixtures {
  static let directory: URL = {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("tether-bench-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(at: FileBenchFixtures.directory) }
    return url
  }()

  static let array1000 = Shared(
    wrappedValue: makeBenchItems(),
    .fileStorage(directory.appendingPathComponent("array1000.json")))

  static let updateCounter = Shared(
    wrappedValue: 0, .fileStorage(directory.appendingPathComponent("update.json")))

  static let propagation = PropagationRig(
    url: directory.appendingPathComponent("propagation.json"))
}

/// A second process that writes values into a file on request, and a key here that watches
/// the file.
final class PropagationRig: Sendable {
  private struct State {
    var writer: Process?
    var input: FileHandle?
    var subscription: SharedSubscription?
    var expected = 0
    var waiter: CheckedContinuation<ContinuousClock.Instant, Never>?
    var next = 0
  }

  private let url: URL
  private let state = Mutex(State())

  init(url: URL) { self.url = url }

  /// Starts the writer and the subscription on first use.
  private func start() throws {
    guard state.withLock({ $0.writer == nil }) else { return }
    try Data("0".utf8).write(to: url)
    let key: FileStorageKey<Int> = .fileStorage(url)
    key.load(context: .initialValue(0), continuation: LoadContinuation { _ in })
    let subscription = key.subscribe(
      context: .initialValue(0),
      subscriber: SharedSubscriber { [weak self] event in
        guard case .value(let value) = event else { return }
        self?.observed(value, at: .now)
      })
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: "/bin/sh")
    // Reads one value per line and writes it into the file in place (no new process).
    writer.arguments = ["-c", "while read v; do printf '%s' \"$v\" > \"$1\"; done", "sh", url.path]
    let pipe = Pipe()
    writer.standardInput = pipe
    try writer.run()
    state.withLock { state in
      state.writer = writer
      state.input = pipe.fileHandleForWriting
      state.subscription = subscription
    }
  }

  private func observed(_ value: Int, at instant: ContinuousClock.Instant) {
    let waiter = state.withLock { state -> CheckedContinuation<ContinuousClock.Instant, Never>? in
      guard value == state.expected else { return nil }
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(returning: instant)
  }

  /// Asks the writer for one new value and returns the nanoseconds until it was observed.
  func measureOne() async throws -> (sample: Double, checksum: UInt64) {
    try start()
    let value = state.withLock { state in
      state.next += 1
      state.expected = state.next
      return state.next
    }
    let begin = ContinuousClock.now
    let end = await withCheckedContinuation { continuation in
      let input = state.withLock { state in
        state.waiter = continuation
        return state.input
      }
      input?.write(Data("\(value)\n".utf8))
    }
    return (Double((end - begin).nanoseconds), UInt64(value))
  }
}
