import Foundation
import Streams
import Synchronization
import TetherSupport

/// The one ``FileStorage`` per path of this process, whatever the value type of the keys that
/// use it, so every write to a file from this process goes through one queue.
///
/// Entries are weak: a path no key uses any more is forgotten (its storage goes away with the
/// last key; nothing is kept per path for the life of the process). Only disk keys come here;
/// a key in an isolated scope keeps its file in memory and never touches the registry.
enum FileStorageRegistry {
  /// A registry entry: weak, so the storage goes away with the last key that uses it.
  private struct Entry {
    weak var storage: FileStorage?
  }

  private static let storages = Lock<[String: Entry]>([:])

  /// The directories whose abandoned temporary files were already removed, so a new key in a
  /// directory another key scanned does not list it again (10,000 keys in a populated
  /// directory would otherwise list it 10,000 times). One entry per directory, cleared if it
  /// ever grows past `scannedDirectoryLimit` (a rescan is only slower, never wrong).
  private static let scannedDirectories = Lock<[String: Int]>([:])
  private static let scannedDirectoryLimit = 4_096

  /// How old a temporary file must be before it counts as abandoned by a killed writer.
  static let abandonedTemporaryFileAge = Duration.seconds(300)

  /// Flushes every pending write at normal process exit; registered on first use.
  private static let exitFlush: Void = { atexit { FileStorageRegistry.flushAll() } }()

  /// The storage for `path`, an absolute, normalized path.
  ///
  /// The first time this process touches a directory, the new storage's queue first removes
  /// temporary files that writers killed mid-write left in it (ones older than
  /// ``abandonedTemporaryFileAge``), before any load or write.
  static func storage(at path: String) -> FileStorage {
    let (storage, isNew) = storages.withLock { storages in
      if let existing = storages[path]?.storage { return (existing, false) }
      let storage = FileStorage(path: path)
      storages[path] = Entry(storage: storage)
      return (storage, true)
    }
    _ = exitFlush
    guard isNew else { return storage }
    let directory = storage.url.deletingLastPathComponent().path
    let needsScan = scannedDirectories.withLock { scanned in
      guard scanned[directory] == nil else { return false }
      if scanned.count >= scannedDirectoryLimit { scanned.removeAll() }
      scanned[directory] = 1
      return true
    }
    if needsScan {
      storage.async {
        FileSystem.removeAbandonedTemporaryFiles(
          in: directory, olderThan: abandonedTemporaryFileAge)
      }
    }
    return storage
  }

  /// Drops the entry of a storage that went away (its `deinit`).
  static func forget(_ path: String) {
    storages.withLock { storages in
      // Another storage may already have taken the path since this one's last reference went.
      if storages[path]?.storage == nil { storages[path] = nil }
    }
  }

  /// Writes every pending save now and waits for all writes to finish: the last chance,
  /// at normal process exit.
  static func flushAll() {
    for storage in storages.withLock({ $0.values.compactMap(\.storage) }) {
      storage.flush()
      storage.waitForWrites()
    }
  }

  /// Whether this process keeps a storage for `path` (for tests: a path nobody uses is
  /// forgotten).
  static func isRegistered(_ path: String) -> Bool {
    storages.withLock { $0[path] != nil }
  }

  /// How many times this process listed `directory` for abandoned temporary files since the
  /// bookkeeping was last cleared (for tests: at most once).
  static func scanCount(of directory: String) -> Int {
    scannedDirectories.withLock { $0[directory] ?? 0 }
  }
}
