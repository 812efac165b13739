import Synchronization
import TetherSupport

extension Reference {
  // MARK: Updating atomically where the value lives

  /// Applies `body` atomically where the value is stored (see `Shared.update`).
  ///
  /// A value that lives only here is updated under the lock, exactly like `withLock`. A key
  /// that conforms to `AtomicSharedKey` applies `body` in its storage; the value it stored
  /// becomes this reference's value without being saved again. Any other key gets `withLock`
  /// and a save conditional on the version the body's value was derived from, retried (see
  /// `updateBySaving`).
  func update<R: Sendable>(_ body: @Sendable (inout Value) throws -> R) async throws -> R {
    if updatesInPlace { return try withLock(body) }
    guard let atomic = writer as? any AtomicSharedKey<Value> else {
      return try await updateBySaving(body)
    }
    // Changes made before the update are saved first: the key applies `body` to the stored
    // value, which must include them (the key then orders them before it).
    await waitForQueuedSave()
    return try await withoutActuallyEscaping(body) { body in
      // The key may keep the transform after it resumes; the run drops `body` when it ends,
      // which is what lets `body` stay non-escaping for the caller.
      let run = UpdateRun(body)
      defer { run.end() }
      let observer = issueObserver
      // The stored value is applied when the key resumes, not after the `await`: a key resumes
      // its updates in the order it stored them, and the tasks waking from `await` do not keep
      // that order (the holder of 60 stored increments ended at 59 when the task of the 59th
      // woke last).
      _ = try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        atomic.update(
          { try run.apply(to: &$0) }, initialValue: initialValue,
          continuation: UpdateContinuation(observer: observer) { versioned in
            let result = versioned.outcome
            if case .success(let stored) = result {
              self.applyUpdated(stored, version: versioned.version)
              // The update stored a value: an earlier save's failure no longer describes the
              // storage (a conflict once reported stuck after a later successful update).
              self.clearSaveError()
            }
            continuation.resume(with: result.map { _ in })
          })
      }
      return try run.result()
    }
  }
}

extension Reference {
  /// `update` for a key that is not atomic: `withLock`, then a save of the result conditional
  /// on the version the body's value was derived from. A save the key refuses as a conflict
  /// (`SaveContinuation.resume(conflict:…)`) hands the holders the stored value; the body then
  /// runs again on it after a jittered back-off, until the save lands or `retry.deadline`
  /// passes since the start (then the refusal is thrown: nothing landed). Any other save error
  /// is thrown at once, and whether that save landed is unknown. For a key without versions
  /// the save is unconditional: exact among this process's holders only.
  func updateBySaving<R: Sendable>(
    _ body: @Sendable (inout Value) throws -> R, retry: UpdateRetry = .standard
  ) async throws -> R {
    let clock = ContinuousClock()
    let start = clock.now
    var refusals = 0
    while true {
      // The basis before the body: if someone else's value is taken between it and the save,
      // the save stays conditional on the older version and is refused, so a body that ran
      // on a value the holders no longer show never lands.
      let basis = state.withLock { $0.basis }
      let result = try withLock(body, save: false)
      let outcome = await saveNow(derivedFrom: basis)
      guard case .failure(let error) = outcome.outcome else { return result }
      guard let conflict = outcome.conflict else { throw error }
      refusals += 1
      guard clock.now - start < retry.deadline else { throw error }
      if case .unknown = conflict {
        // The refusal did not hand over the stored value: load it before running again.
        try? await load()
      }
      try await Task.sleep(for: retry.delay(afterFailures: refusals))
    }
  }
}

/// One `update`: the caller's body, and the result of the latest run (the one the key applied,
/// since a key runs the transform again only after a conflict discarded the previous run).
final class UpdateRun<Value, R: Sendable>: Sendable {
  private struct State {
    var body: (@Sendable (inout Value) throws -> R)?
    var result: R?
  }
  private let state: Lock<State>

  init(_ body: @escaping @Sendable (inout Value) throws -> R) {
    state = Lock(State(body: body))
  }

  /// Runs the body (outside the lock: it is the caller's code) and keeps its result.
  func apply(to value: inout Value) throws {
    guard let body = state.withLock({ $0.body }) else { throw UpdateEnded() }
    let result = try body(&value)
    state.withLock { $0.result = result }
  }

  /// The result of the run the key applied.
  func result() throws -> R {
    guard let result = state.withLock({ $0.result }) else { throw UpdateEnded() }
    return result
  }

  /// Drops the body: a key that calls the transform after resuming gets an error.
  func end() { state.withLock { $0.body = nil } }
}

/// The error a key gets when it runs an update's transform after the update ended.
struct UpdateEnded: Error, CustomStringConvertible {
  var description: String { "The update already ended; its transform can no longer run." }
}
