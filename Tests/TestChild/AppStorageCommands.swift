import Foundation
import Tether

/// Commands for `.appStorage` across processes.
///
/// - `appstorage-peer SUITE KEY`: holds `@Shared(.appStorage(KEY, store: SUITE))` (a `String`,
///   default `"none"`), prints `ready`, then `saw VALUE` for each value the holder takes
///   (another process's changes included). Each stdin line `set VALUE` sets the holder to
///   VALUE (saved to the defaults file at once). Exits at the end of its input.
let appStorageCommands: [String: ChildCommand] = [
  "appstorage-peer": { arguments in
    guard arguments.count == 2, let store = UserDefaults(suiteName: arguments[0]) else {
      throw ChildUsage("appstorage-peer SUITE KEY")
    }
    let value = Shared(wrappedValue: "none", .appStorage(arguments[1], store: store))
    Thread {
      while let line = readLine(strippingNewline: true) {
        guard line.hasPrefix("set ") else { continue }
        value.withLock { $0 = String(line.dropFirst(4)) }
      }
      exit(0)
    }.start()
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    for await seen in value.values {
      FileHandle.standardOutput.write(Data("saw \(seen)\n".utf8))
    }
  }
]
