import Foundation
import Synchronization
import Tether

/// Commands the file-storage tests run in a second process. Values are JSON integers, or
/// for the storm commands JSON arrays of `stormLength` equal integers (complete only if every
/// element is there).
let fileCommands: [String: ChildCommand] = [
  // file-hold PATH: holds the key; prints `ready`, then `value N`, `default` or `error …`
  // for the loaded value and for each change, one line each, until stdin closes.
  "file-hold": { arguments in
    let key = try intKey(arguments)
    printLine(describe(await load(key)))
    let subscription = key.subscribe(
      context: .initialValue(0),
      subscriber: SharedSubscriber { event in
        switch event {
        case .value(let value): printLine("value \(value)")
        case .initialValue: printLine("default")
        case .failure(let error): printLine("error \(error)")
        case .loading: break
        }
      })
    printLine("ready")
    waitForEndOfInput()
    subscription.cancel()
  },
  // file-write PATH FIRST COUNT: saves FIRST, FIRST+1, … COUNT values, each written at
  // once, then prints `done`.
  "file-write": { arguments in
    let key = try intKey(arguments)
    guard arguments.count >= 3, let first = Int(arguments[1]), let count = Int(arguments[2])
    else { throw ChildUsage("file-write PATH FIRST COUNT") }
    for value in first..<(first + count) { try await save(value, to: key, .userInitiated) }
    printLine("done")
  },
  // file-mutate-exit PATH VALUE: saves VALUE-1 then VALUE as two throttled mutations (the
  // second waits for the one-second window) and returns at once; the process exits
  // normally, so only the exit flush can write VALUE.
  "file-mutate-exit": { arguments in
    let key = try intKey(arguments)
    guard arguments.count >= 2, let value = Int(arguments[1]) else {
      throw ChildUsage("file-mutate-exit PATH VALUE")
    }
    try await save(value - 1, to: key, .didSet)
    key.save(value, context: .didSet, continuation: SaveContinuation { _ in })
  },
  // file-storm PATH: writes [i, i, …] for i = 1, 2, … as fast as it can until killed;
  // prints `started` after the first write.
  "file-storm": { arguments in
    let key = try arrayKey(arguments)
    var index = 1
    while true {
      try await save(Array(repeating: index, count: stormLength), to: key, .userInitiated)
      if index == 1 { printLine("started") }
      index += 1
    }
  },
  // file-read-loop PATH: reads and decodes the file in a tight loop until stdin closes;
  // then prints `reads N undecodable M`. Prints `ready` once reading.
  "file-read-loop": { arguments in
    guard let path = arguments.first else { throw ChildUsage("file-read-loop PATH") }
    let stop = Atomic<Bool>(false)
    let thread = Thread {
      waitForEndOfInput()
      stop.store(true, ordering: .relaxed)
    }
    thread.start()
    var reads = 0
    var undecodable = 0
    printLine("ready")
    while !stop.load(ordering: .relaxed) {
      guard let data = FileManager.default.contents(atPath: path) else { continue }
      reads += 1
      if !isCompleteStormValue(data) { undecodable += 1 }
    }
    printLine("reads \(reads) undecodable \(undecodable)")
  },
  // file-pingpong PATH PARITY TURNS: holds an Int counter (`throttle: .zero`) and adds one
  // whenever it holds a value of its parity (value % 2 == PARITY) below TURNS, so two
  // processes of opposite parities take turns. Prints `ready` once holding and `done N` once
  // the counter reached TURNS (and `saw N` for each value it sees). A missed change from the
  // other process stalls it for good.
  "file-pingpong": { arguments in
    guard arguments.count >= 3, let parity = Int(arguments[1]), let turns = Int(arguments[2])
    else { throw ChildUsage("file-pingpong PATH PARITY TURNS") }
    let key: FileStorageKey<Int> = .fileStorage(
      URL(fileURLWithPath: arguments[0]), throttle: .zero)
    let counter = Shared(wrappedValue: 0, key)
    // A line on stdin asks for the holder's state, for the failure message of a stalled run.
    Thread {
      while readLine() != nil {
        let file = (try? String(contentsOfFile: arguments[0], encoding: .utf8)) ?? "-"
        printLine("status value \(counter.wrappedValue) file \(file)")
      }
    }.start()
    printLine("ready")
    for await value in counter.values {
      printLine("saw \(value)")  // For the failure message of a stalled run.
      if value >= turns { break }
      if value % 2 == parity {
        counter.withLock { if $0 == value { $0 += 1 } }
      }
    }
    printLine("done \(counter.wrappedValue)")
  },
  // file-save-umask PATH UMASK VALUE [PERMISSIONS]: sets the process's umask (octal), then
  // saves VALUE through a holder (with the key's PERMISSIONS, octal, if given); prints
  // `saved` or `error DESCRIPTION`.
  "file-save-umask": { arguments in
    guard arguments.count >= 3, let mask = mode_t(arguments[1], radix: 8),
      let value = Int(arguments[2])
    else { throw ChildUsage("file-save-umask PATH UMASK VALUE [PERMISSIONS]") }
    let permissions = arguments.count > 3 ? Int(arguments[3], radix: 8) ?? 0o666 : 0o666
    umask(mask)
    let key: FileStorageKey<Int> = .fileStorage(
      URL(fileURLWithPath: arguments[0]), permissions: permissions)
    printLine(await saveThroughHolder(value, key))
  },
  // file-save-unprivileged PATH VALUE: when running as root, becomes `nobody` (uid and gid
  // 65534, no supplementary groups) first, then saves VALUE through a holder; prints
  // `saved` or `error DESCRIPTION` (and `dropped` before, when privileges were dropped).
  "file-save-unprivileged": { arguments in
    guard arguments.count >= 2, let value = Int(arguments[1]) else {
      throw ChildUsage("file-save-unprivileged PATH VALUE")
    }
    if getuid() == 0 {
      guard setgroups(0, nil) == 0, setgid(65534) == 0, setuid(65534) == 0 else {
        throw ChildUsage("could not drop privileges: \(String(cString: strerror(errno)))")
      }
      printLine("dropped")
    }
    let key: FileStorageKey<Int> = .fileStorage(URL(fileURLWithPath: arguments[0]))
    printLine(await saveThroughHolder(value, key))
  },
]

/// The value of the `update` tests: how many increments each process made, their total, and
/// how many times a plain `withLock` process touched it.
struct Tally: Codable, Sendable, Equatable {
  var counts: [String: Int] = [:]
  var total = 0
  var touches = 0
}

let updateCommands: [String: ChildCommand] = [
  // file-update PATH NAME COUNT: adds one to counts[NAME] and to total, COUNT times, each
  // with `$tally.update { }` (one atomic update of the file); prints `ready` first, `progress N` every 10 updates,
  // and `done` at the end.
  "file-update": { arguments in
    guard arguments.count >= 3, let count = Int(arguments[2]) else {
      throw ChildUsage("file-update PATH NAME COUNT")
    }
    let name = arguments[1]
    let key: FileStorageKey<Tally> = .fileStorage(
      URL(fileURLWithPath: arguments[0]), throttle: .zero)
    let tally = Shared(wrappedValue: Tally(), key)
    printLine("ready")
    for index in 1...max(1, count) {
      try await tally.update { tally in
        tally.counts[name, default: 0] += 1
        tally.total += 1
      }
      if index % 10 == 0 { printLine("progress \(index)") }
    }
    printLine("done")
  },
  // file-hold-lock PATH SECONDS: takes the file's sidecar lock (`.NAME.tether-lock`, the lock
  // every file-key write takes), prints `locked`, and releases it by exiting when stdin closes,
  // or after SECONDS at the latest (a bound, so a failing test cannot hang on it).
  "file-hold-lock": { arguments in
    guard arguments.count >= 2, let seconds = Int32(arguments[1]) else {
      throw ChildUsage("file-hold-lock PATH SECONDS")
    }
    let url = URL(fileURLWithPath: arguments[0], isDirectory: false)
    let lockPath = url.deletingLastPathComponent()
      .appendingPathComponent(".\(url.lastPathComponent).tether-lock").path
    let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
    guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else {
      throw ChildUsage("file-hold-lock: cannot lock \(lockPath)")
    }
    printLine("locked")
    var input = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
    _ = poll(&input, 1, seconds * 1000)
  },
  // file-touch PATH: holds the tally (`throttle: .zero`) and adds one to `touches` with
  // `withLock` about every 2 ms (plain `.didSet` saves) until stdin closes; prints `ready`
  // first and `touched N saved M` at the end.
  "file-touch": { arguments in
    guard let path = arguments.first else { throw ChildUsage("file-touch PATH") }
    let key: FileStorageKey<Tally> = .fileStorage(URL(fileURLWithPath: path), throttle: .zero)
    let holder = Shared(wrappedValue: Tally(), key)
    let stop = Atomic<Bool>(false)
    Thread {
      waitForEndOfInput()
      stop.store(true, ordering: .relaxed)
    }.start()
    printLine("ready")
    var touches = 0
    while !stop.load(ordering: .relaxed) {
      holder.withLock { $0.touches += 1 }
      touches += 1
      // Pacing of the load this process adds, not a wait for an event.
      try await Task.sleep(for: .milliseconds(2))
    }
    printLine("touched \(touches) saved \(holder.wrappedValue.touches)")
  },
]

/// Holds `key`, sets the value to `value` and saves it explicitly: `saved` or `error …`.
private func saveThroughHolder(_ value: Int, _ key: FileStorageKey<Int>) async -> String {
  let holder = Shared(wrappedValue: 0, key)
  holder.withLock { $0 = value }
  do {
    try await holder.save()
    return "saved"
  } catch {
    return "error \(error)"
  }
}

/// The length of a storm value.
let stormLength = 500

/// Whether `data` decodes as a complete storm value: `stormLength` equal integers.
func isCompleteStormValue(_ data: Data) -> Bool {
  guard let values = try? JSONDecoder().decode([Int].self, from: data) else { return false }
  return values.count == stormLength && Set(values).count == 1
}

struct ChildUsage: Error, CustomStringConvertible {
  let description: String
  init(_ usage: String) { description = "usage: " + usage }
}

private func intKey(_ arguments: [String]) throws -> FileStorageKey<Int> {
  guard let path = arguments.first else { throw ChildUsage("COMMAND PATH …") }
  return .fileStorage(URL(fileURLWithPath: path))
}

private func arrayKey(_ arguments: [String]) throws -> FileStorageKey<[Int]> {
  guard let path = arguments.first else { throw ChildUsage("COMMAND PATH …") }
  return .fileStorage(URL(fileURLWithPath: path))
}

private func load(_ key: FileStorageKey<Int>) async -> Result<Int?, any Error> {
  await withCheckedContinuation { continuation in
    key.load(
      context: .initialValue(0),
      continuation: LoadContinuation { continuation.resume(returning: $0) })
  }
}

private func describe(_ result: Result<Int?, any Error>) -> String {
  switch result {
  case .success(let value?): return "value \(value)"
  case .success(nil): return "default"
  case .failure(let error): return "error \(error)"
  }
}

private func save<Value>(
  _ value: Value, to key: FileStorageKey<Value>, _ context: SaveContext
) async throws {
  try await withCheckedThrowingContinuation {
    (continuation: CheckedContinuation<Void, any Error>) in
    key.save(
      value, context: context, continuation: SaveContinuation { continuation.resume(with: $0) })
  }
}

private func printLine(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

private func waitForEndOfInput() {
  while readLine() != nil {}
}
