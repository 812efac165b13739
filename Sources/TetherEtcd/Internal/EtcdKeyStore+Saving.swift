import Foundation
import Tether
import TetherHTTP
import TetherSupport

/// An `.etcd` key's saves: compare-and-swap over the version the saved value was derived from,
/// lost answers resolved, transient failures retried in the background.
extension EtcdKeyStore {
  /// Saves `value` after the writes before it: compare-and-swap on the last seen version
  /// (or unconditionally for last-writer-wins). A transient failure is reported and the value
  /// is written again in the background until it lands, unless a newer save supersedes it.
  ///
  /// `version` is the one the holders' value was derived from (`SaveContinuation.version`,
  /// captured under the reference's lock when the body ran), asked again when the write starts
  /// (`SaveContinuation.versionNow`: a background retry of ours written meanwhile is its
  /// basis): a change of someone else's that arrived while the body ran makes this save a
  /// conflict, not an overwrite. A save that
  /// lands resumes with the `mod_revision` it wrote; a refused one hands the stored value
  /// and its version (or the deletion) over with ``EtcdError/conflict(key:)``, so that every
  /// holder converges on it.
  func save(_ value: Value, derivedFrom version: SharedVersion?, continuation: SaveContinuation) {
    let bytes: Data
    do {
      bytes = try self.bytes(of: value)
    } catch {
      return continuation.resume(throwing: error)
    }
    let generation = state.withLock { state in
      state.saveGeneration &+= 1
      return state.saveGeneration
    }
    writes.enqueue { [self] in
      // Asked again now: a background retry of ours queued before this save may have written
      // what this save's value builds on, and the reference knows it by now.
      let seen = (continuation.versionNow ?? version).flatMap(EtcdVersion.init)
      do throws(EtcdError) {
        switch try await write(bytes, derivedFrom: seen) {
        case .written(let version): continuation.resume(version: version.shared)
        case .refused(let version, nil):
          continuation.resume(
            conflict: EtcdError.conflict(key: name), nothingStoredAt: version.shared)
        case .refused(let version, let bytes?):
          switch self.value(from: bytes) {
          case .success(let stored):
            continuation.resume(
              conflict: EtcdError.conflict(key: name), storedValue: stored, version: version.shared)
          // Tether loads it, and the load reports what does not decode.
          case .failure: continuation.resume(conflict: EtcdError.conflict(key: name))
          }
        }
      } catch {
        continuation.resume(throwing: error)
        if error.isTransient {
          retry(bytes, seen: seen, generation: generation, attempt: 1, reportingTo: continuation)
        }
      }
    }
  }

  /// The back-off between background attempts of a save that failed transiently.
  private static var saveBackoff: Backoff {
    Backoff(initial: .milliseconds(200), maximum: .seconds(5), maximumFailures: 120)
  }

  /// Writes `bytes` again after a back-off, while no newer save was made. The save's
  /// `continuation` (resumed with the first failure) hears how it ended: `saveError` clears
  /// when it lands, and says so when it is refused (a conflict).
  private func retry(
    _ bytes: Data, seen: EtcdVersion?, generation: UInt64, attempt: Int,
    reportingTo continuation: SaveContinuation
  ) {
    guard Self.saveBackoff.delay(afterFailures: attempt, random: 0) != nil else { return }
    state.withLock { $0.retriesWaiting += 1 }
    Task { [self] in
      try? await Task.sleep(for: Self.saveBackoff.delay(afterFailures: attempt) ?? .seconds(5))
      // Queued before it stops waiting, so `report` never finds neither.
      writes.enqueue { [self] in
        guard state.withLock({ $0.saveGeneration == generation }) else { return }
        do throws(EtcdError) {
          switch try await write(bytes, derivedFrom: seen) {
          case .refused:
            continuation.resolvedLater(with: .failure(EtcdError.conflict(key: name)), version: nil)
          case .written(let version):
            // The reference takes the version as its own write: its next save writes over it.
            continuation.resolvedLater(with: .success(()), version: version.shared)
          }
        } catch {
          if error.isTransient {
            retry(
              bytes, seen: seen, generation: generation, attempt: attempt + 1,
              reportingTo: continuation)
          } else {
            continuation.resolvedLater(with: .failure(error))
          }
        }
      }
      state.withLock { $0.retriesWaiting -= 1 }
    }
  }

  /// Holds the changes observed while `body` writes, until the caller records the outcome
  /// (``observe(_:_:own:)`` with `own`, or ``endWrite()``): the write's own echo, arriving
  /// before its answer, is then known by its revision, and not told to the holders.
  func writing<R>(_ body: () async throws(EtcdError) -> R) async throws(EtcdError) -> R {
    state.withLock { $0.writeInFlight = true }
    do {
      return try await body()
    } catch {
      endWrite()
      throw error
    }
  }

  /// The write in flight did not land: the changes held meanwhile are told.
  func endWrite() {
    for change in state.withLock({ releaseHeld(&$0) }) { publish(change) }
  }

  /// Remembers `bytes`, compared against `base`, as a write whose outcome is unknown.
  private func markUnresolved(_ bytes: Data, over base: EtcdVersion?) {
    state.withLock { state in
      state.unresolved.removeAll { $0.bytes == bytes }
      state.unresolved.append(Unresolved(bytes: bytes, over: base))
      if state.unresolved.count > Self.unresolvedLimit { state.unresolved.removeFirst() }
    }
  }

  /// The write of ours whose outcome was unknown that stored `bytes`, if any.
  private func unresolvedWrite(of bytes: Data) -> Unresolved? {
    state.withLock { state in state.unresolved.first { $0.bytes == bytes } }
  }

  /// One save of `bytes`, resolving lost answers: a write whose answer was lost is sent again
  /// with the same compare; if that compare fails because the key already holds exactly these
  /// bytes, the first one landed. If it holds the bytes of an earlier save of ours whose
  /// outcome was unknown, that one landed late: the write goes on over it.
  private func write(
    _ bytes: Data, derivedFrom seen: EtcdVersion?
  ) async throws(EtcdError) -> SaveOutcome {
    // The cluster's `timeout` bounds the whole save, resends included: without a quorum the
    // holders hear of it (`saveError`) within that time, and the background retry goes on.
    let deadline = ContinuousClock.now + cluster.timeout
    func remaining() -> Duration { max(.milliseconds(1), deadline - ContinuousClock.now) }
    let lease = try await currentLease()
    if lastWriterWins {
      var lost = 0
      while true {
        do throws(EtcdError) {
          let revision = try await writing { () throws(EtcdError) in
            try await cluster.put(key, bytes, lease: lease, timeout: remaining())
          }
          observe(revision, ownKeyValue(bytes, revision: revision), own: true)
          return .written(.stored(revision))
        } catch {
          guard case .outcomeUnknown = error, lost < 3, ContinuousClock.now < deadline else {
            throw error
          }
          lost += 1
        }
      }
    }
    guard var base = try await self.base(of: bytes, derivedFrom: seen) else { return refusal() }
    var uncertain = false
    var lost = 0
    var lateLandings = 0
    while true {
      let result: EtcdTxnResult
      do throws(EtcdError) {
        result = try await writing { () throws(EtcdError) in
          try await cluster.txn(
            compare: [EtcdTxn.modRevisionEquals(key, base.modRevision)],
            success: [EtcdTxn.put(key, bytes, lease: lease)], failure: [EtcdTxn.range(key)],
            timeout: remaining())
        }
      } catch {
        // A transient failure may still commit (a leader without quorum keeps the entry in its
        // log and commits it once the followers are back): remember it as possibly ours.
        if error.isTransient { markUnresolved(bytes, over: base) }
        guard case .outcomeUnknown = error, lost < 3, ContinuousClock.now < deadline else {
          throw error
        }
        uncertain = true
        lost += 1
        continue
      }
      if result.succeeded {
        observe(result.revision, ownKeyValue(bytes, revision: result.revision), own: true)
        return .written(.stored(result.revision))
      }
      endWrite()
      let current = result.ranges.first?.first
      let late = current.flatMap { unresolvedWrite(of: $0.value) }
      if let current, current.value == bytes, uncertain || late != nil {
        // This very write (resent after a lost answer, or an earlier attempt of it).
        observe(result.revision, current, own: true)
        return .written(.stored(current.modRevision))
      }
      if let current, let late, lateLandings < 3, late.over == base {
        // An earlier save of ours whose outcome was unknown landed late, over the very version
        // this one is conditional on: the key went from `base` straight to it, so nothing of
        // anyone else's came between. Go on over it.
        observe(result.revision, current, own: true)
        lateLandings += 1
        base = .stored(current.modRevision)
        continue
      }
      publish(observe(result.revision, current))
      if let current { return .refused(.stored(current.modRevision), current.value) }
      return refusal()
    }
  }

  /// A refused save, with the newest version known here and its bytes.
  private func refusal() -> SaveOutcome {
    state.withLock { state in .refused(state.newest ?? .absent(since: state.knownAt), state.stored)
    }
  }

  /// The version a save of `bytes` derived from `seen` writes over, or `nil` when it is
  /// refused without a write: a deletion older than the newest version known here (etcd sees
  /// every deletion as `mod_revision` 0, so its compare cannot tell them apart), or, when
  /// nothing was seen, a stored value other than `bytes`.
  private func base(
    of bytes: Data, derivedFrom seen: EtcdVersion?
  ) async throws(EtcdError) -> EtcdVersion? {
    if let seen {
      let newest = state.withLock { $0.newest }
      guard seen.isAbsent, let newest, newest != seen else { return seen }
      return nil
    }
    // Nothing seen yet (the load failed): only an absent key, or one that already holds
    // these bytes, may be written without overwriting a version nobody here has seen.
    let range = try await cluster.range(key)
    let current = range.keyValues.first
    let change = observe(range.revision, current)
    if let current, current.value != bytes {
      publish(change)
      return nil
    }
    return EtcdVersion(current, at: range.revision)
  }

  /// How a save ended, when etcd answered.
  enum SaveOutcome {
    /// Written at this version.
    case written(EtcdVersion)
    /// Refused: what is stored now, at its version (`nil` bytes: nothing is stored).
    case refused(EtcdVersion, Data?)
  }

  func ownKeyValue(_ bytes: Data, revision: Int64) -> EtcdKeyValue {
    EtcdKeyValue(
      key: key, value: bytes, createRevision: 0, modRevision: revision, version: 0, lease: 0)
  }
}
