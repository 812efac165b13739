import Foundation
import Synchronization

/// Atomic updates of a ``FileStorage``: read, transform and write under the file's lock.
extension FileStorage {
  /// Applies `transform` to the value stored in the file, atomically with respect to every
  /// writer of the file in any process, and writes the result; `completion` gets the stored
  /// value and the version written (see `FileVersions`).
  ///
  /// Never blocks its caller on another writer: waiting for the file's lock happens on the
  /// storage's queue, and the caller (often a thread of Swift's cooperative pool) returns at
  /// once. One case runs on the caller's thread, because it cannot wait: nothing of this file
  /// is on its queue or about to be (so `queue.sync` enters at once), no throttled save is
  /// pending, and the lock is free (`LOCK_NB`). Then the disk wait is one write, and the hops
  /// to the queue and back would add about a tenth to it.
  ///
  /// Holding the file's lock from the read to the rename is what makes it atomic: every write
  /// of a file key, in every process, takes the same lock. A pending throttled save of this
  /// process is written (with its conflict check) first, so an update never hides it.
  /// Nothing stored (a missing or empty file) is `initialValue`. A file that does not decode
  /// is moved aside and the update fails, as a load would; so does a file above the size cap.
  /// Completions run in the order the updates were written (on the queue, or inside it).
  func update<Value: Sendable>(
    initialValue: Value, options: WriteOptions,
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data,
    transform: @escaping @Sendable (inout Value) throws -> Void,
    completion: @escaping @Sendable (Result<(Value, SharedVersion?), any Error>) -> Void
  ) {
    let body: @Sendable (String) -> Result<(Value, SharedVersion?), any Error> = { target in
      self.update(
        at: target, initialValue: initialValue, options: options, decode: decode,
        encode: encode, transform: transform)
    }
    // Reserving the backlog (0 → 1) means no job is on the queue or waiting for it, so
    // `queue.sync` cannot wait for another writer; jobs enqueued meanwhile run after this one.
    if !isOnQueue,
      backlog.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged
    {
      let done = queue.sync { () -> Bool in
        guard state.withLock({ $0.pending == nil }),
          let outcome = withFileLockIfFree(body)
        else { return false }
        completion(outcome.mapError { $0 as any Error }.flatMap { $0 })
        return true
      }
      backlog.subtract(1, ordering: .releasing)
      if done { return }
    }
    async {
      if let job = self.takePending() { self.perform(job) }
      let outcome = self.withFileLock(body)
      completion(outcome.mapError { $0 as any Error }.flatMap { $0 })
    }
  }

  /// Reads, transforms and writes the file at `target` (the path with symbolic links
  /// resolved). Runs under the file's lock.
  private func update<Value: Sendable>(
    at target: String, initialValue: Value, options: WriteOptions,
    decode: @Sendable (Data) throws -> Value,
    encode: @Sendable (Value) throws -> Data,
    transform: @Sendable (inout Value) throws -> Void
  ) -> Result<(Value, SharedVersion?), any Error> {
    let contents: (Data, FileStat)?
    do throws(FileSystemError) {
      contents = try FileSystem.read(path, maximumSize: options.maximumSize)
    } catch {
      return .failure(readError(error, limit: options.maximumSize))
    }
    var value = initialValue
    if let (data, identity) = contents {
      switch FileContents.interpret(data, maximumSize: options.maximumSize, decode: decode) {
      case .empty: break
      case .value(let stored): value = stored
      case .tooLarge(let size):
        return .failure(
          FileStorageKeyError.fileTooLarge(url: url, size: size, limit: options.maximumSize))
      case .undecodable(let error):
        return .failure(quarantine(identity, underlying: error))
      }
    }
    do {
      try transform(&value)
    } catch {
      return .failure(error)
    }
    let data: Data
    do {
      data = try encode(value)
    } catch {
      return .failure(FileStorageKeyError.encodingFailed(url: url, underlying: error))
    }
    return writeBytes(data, to: target, permissions: options.permissions)
      .map { (value, $0) }.mapError { $0 as any Error }
  }
}
