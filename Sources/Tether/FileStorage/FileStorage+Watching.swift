import Foundation
import Synchronization

/// Watching and delivery of a ``FileStorage``: the file is watched while it has subscribers,
/// and a change made by anyone else is read once, decoded for every subscriber, and handed to
/// them (winning over saves still waiting for their window).
extension FileStorage {
  /// Adds a subscriber; the file is watched while there is at least one.
  ///
  /// - Returns: A closure that removes the subscriber and writes any pending save.
  func subscribe(_ subscriber: Subscriber) -> @Sendable () -> Void {
    let (id, needsWatch) = state.withLock { state in
      state.nextSubscriberID += 1
      state.subscribers[state.nextSubscriberID] = subscriber
      return (state.nextSubscriberID, state.watches.isEmpty)
    }
    if needsWatch {
      let watches = watchPaths().map { watched in
        FileWatcher.shared.watch(watched) { [weak self] change in
          switch change {
          case .created: break  // Empty until its writer closes it; wait for that.
          case .unwatchable(let code): self?.reportUnwatchable(errno: code)
          default: self?.fileChanged()
          }
        }
      }
      let unused = state.withLock { state -> [CancelOnce] in
        guard state.watches.isEmpty, !state.subscribers.isEmpty else { return watches }
        state.watches = watches
        return []
      }
      unused.forEach { $0.cancel() }
    }
    // The file may have changed between the load and the watch starting.
    scheduleRefresh()
    // Strong: a live subscription keeps its storage (and the watch) alive even when no key does.
    return { self.unsubscribe(id) }
  }

  /// The path, and the file at the end of a symbolic link there: a process writing through
  /// the link (as this one does) changes the target's directory, not the link's.
  private func watchPaths() -> [String] {
    guard let target = try? FileSystem.resolveSymbolicLinks(path), target != path else {
      return [path]
    }
    return [path, target]
  }

  /// The system refused to watch the file: tell every holder once (in `loadError`) and this
  /// process's standard error once, and look now; the watcher checks periodically from here.
  private func reportUnwatchable(errno code: Int32) {
    let subscribers = state.withLock { state -> [Subscriber] in
      guard !state.reportedUnwatchable else { return [] }
      state.reportedUnwatchable = true
      return Array(state.subscribers.values)
    }
    let error = FileStorageKeyError.watchUnavailable(
      url: url, errno: code, checkingEvery: FileWatcher.fallbackInterval)
    if !subscribers.isEmpty { Self.reportToStandardErrorOnce(error) }
    subscribers.forEach { $0.failed(error) }
    scheduleRefresh()
  }

  private static let reportedToStandardError = Atomic<Bool>(false)

  private static func reportToStandardErrorOnce(_ error: FileStorageKeyError) {
    guard !reportedToStandardError.exchange(true, ordering: .relaxed) else { return }
    let advice = "raise fs.inotify.max_user_watches; reported once per process"
    FileHandle.standardError.write(Data("Tether: \(error) (\(advice))\n".utf8))
  }

  private func unsubscribe(_ id: UInt64) {
    let watches = state.withLock { state -> [CancelOnce] in
      state.subscribers[id] = nil
      guard state.subscribers.isEmpty else { return [] }
      defer {
        state.watches = []
        state.reportedUnwatchable = false
      }
      return state.watches
    }
    watches.forEach { $0.cancel() }
    flush()
  }

  /// The watcher saw the file change: look at it on the queue, unless it is the version this
  /// process already knows (its own write, most often). Whatever comes after that version
  /// brings its own event.
  private func fileChanged() {
    let (known, renaming) = state.withLock { ($0.disk, $0.renaming) }
    let current = FileSystem.stat(path)
    if known != .unknown, Self.matches(known, current) { return }
    if let renaming, current == renaming { return }
    scheduleRefresh()
  }

  private func scheduleRefresh() {
    state.withLock { state in
      guard !state.refreshScheduled else { return }
      state.refreshScheduled = true
      async { _ = self.refresh() }
    }
  }

  /// Looks at the file and, if someone else changed it, cancels any pending write (their
  /// change wins) and tells every subscriber. Runs on the queue.
  ///
  /// - Returns: Whether the file had changed.
  @discardableResult
  func refresh() -> Bool {
    let known = state.withLock { state in
      state.refreshScheduled = false
      return state.disk
    }
    if Self.matches(known, FileSystem.stat(path)) { return false }
    let listeners = state.withLock { Array($0.subscribers.values) }
    let maximumSize = listeners.map(\.maximumSize).max() ?? FileStorageKeyDefaults.maximumFileSize
    let contents: (Data, FileStat)?
    do throws(FileSystemError) {
      contents = try FileSystem.read(path, maximumSize: maximumSize)
    } catch {
      let failure = readError(error, limit: maximumSize)
      listeners.forEach { $0.failed(failure) }
      return false
    }
    let disk: Disk = contents.map { .present($0.1, Fingerprint($0.0)) } ?? .absent
    if known == .unknown {
      // Nothing was loaded before the watch started: this is the baseline, not a change.
      record(disk)
      return false
    }
    if case .present(_, let old) = known, case .present(_, let new) = disk, old == new {
      // Same bytes, new identity (touched, or rewritten): no change for the holders, and the
      // same version (see `FileVersions`).
      state.withLock { _ = $0.see(disk) }
      return false
    }
    deliver(contents, disk: disk)
    return true
  }

  /// Tells every holder what the file holds now, whatever they have: after a conflict, the
  /// holders must end up with the file's value even when this process had already seen it.
  func deliverCurrentFile() {
    let maximumSize =
      state.withLock { $0.subscribers.values.map(\.maximumSize).max() }
      ?? FileStorageKeyDefaults.maximumFileSize
    let contents: (Data, FileStat)?
    do throws(FileSystemError) {
      contents = try FileSystem.read(path, maximumSize: maximumSize)
    } catch {
      let failure = readError(error, limit: maximumSize)
      state.withLock { Array($0.subscribers.values) }.forEach { $0.failed(failure) }
      return
    }
    let disk: Disk = contents.map { .present($0.1, Fingerprint($0.0)) } ?? .absent
    deliver(contents, disk: disk)
  }

  /// Records `disk`, drops any pending save (the file's version wins over it) and hands the
  /// contents to every subscriber with their version. Runs on the queue.
  ///
  /// The holders' saves need no bookkeeping here: each carries the version its value was
  /// derived from (`SaveContinuation.version`), so a mutation made from the old value, whenever
  /// its save arrives, is judged against the old version and is refused as a conflict. The
  /// dropped pending save is refused after the holders were told, so that their engine takes
  /// the new value with the refusal.
  func deliver(_ contents: (Data, FileStat)?, disk: Disk) {
    let (subscribers, superseded, timer, seen) = state.withLock { state in
      let seen = state.see(disk)
      defer {
        state.pending = nil
        state.trailingTimer = nil
      }
      return (Array(state.subscribers.values), state.pending, state.trailingTimer, seen)
    }
    timer?.cancel()
    // The external change wins over saves still waiting for their window.
    let conflict = FileStorageKeyError.conflict(url: url)
    defer { superseded?.continuations.forEach { $0.resume(conflict: conflict) } }
    guard let (data, identity) = contents, !data.isEmpty else {
      subscribers.forEach { $0.deleted(seen) }
      return
    }
    // Decode for everyone first, so telling the holders takes as little time as possible.
    var actions: [@Sendable (SharedVersion?) -> Void] = []
    var corrupt = false
    for subscriber in subscribers {
      switch FileContents.interpret(
        data, maximumSize: subscriber.maximumSize, decode: subscriber.prepare)
      {
      case .value(let deliver):
        actions.append(deliver)
      case .empty:
        actions.append(subscriber.deleted)
      case .tooLarge(let size):
        let error = FileStorageKeyError.fileTooLarge(
          url: url, size: size, limit: subscriber.maximumSize)
        actions.append { _ in subscriber.failed(error) }
      case .undecodable(let error):
        // Not moved aside yet: another process may be in the middle of writing it in place.
        // The next write from this process moves it aside first.
        corrupt = true
        let failure = FileStorageKeyError.decodingFailed(
          url: url, preservedAt: nil, underlying: error)
        actions.append { _ in subscriber.failed(failure) }
      }
    }
    // A file that does not decode is no version a holder's value can be derived from.
    let version = corrupt ? state.withLock { $0.see(.corrupt(identity)) } : seen
    actions.forEach { $0(version) }
  }
}
