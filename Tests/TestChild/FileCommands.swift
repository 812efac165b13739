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
]

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
