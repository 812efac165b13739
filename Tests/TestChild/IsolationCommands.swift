import Foundation
import Tether

/// Commands that show what an isolated storage scope does with a file key's real path, run in
/// their own process so a tracer (`strace`) sees every system call they make.
///
/// - `isolated-file-key SCOPE`: in `withSharedStorage(.isolated)` (`SCOPE` = `isolated`) or in
///   the process's own storage (`process`, the control), declares
///   `@Shared(.fileStorage(url))` for the path in the environment variable
///   `TETHER_REAL_PATH` (an environment variable, not an argument: the tracer logs arguments),
///   then reads, mutates, saves, updates, reloads and observes it, releases it, and prints
///   `done`.
let isolationCommands: [String: ChildCommand] = [
  "isolated-file-key": { arguments in
    guard let scope = arguments.first, scope == "isolated" || scope == "process",
      let path = ProcessInfo.processInfo.environment["TETHER_REAL_PATH"]
    else { throw ChildUsage("isolated-file-key isolated|process (path in TETHER_REAL_PATH)") }
    let storage: SharedStorage = scope == "isolated" ? .isolated : .process
    try await withSharedStorage(storage) {
      let url = URL(fileURLWithPath: path, isDirectory: false)
      @Shared(.fileStorage(url)) var count = 0
      var values = $count.values.makeAsyncIterator()
      _ = await values.next()
      $count.withLock { $0 += 1 }
      try await $count.save()
      try await $count.update { $0 += 1 }
      try await $count.load()
      guard count == 2 else { throw UnexpectedValue(count: count) }
    }
    FileHandle.standardOutput.write(Data("done\n".utf8))
  }
]

/// The isolated key did not end with the value it was given.
private struct UnexpectedValue: Error, CustomStringConvertible {
  let count: Int
  var description: String { "count is \(count), not 2" }
}
