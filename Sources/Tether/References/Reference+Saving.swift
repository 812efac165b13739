import Synchronization
import TetherSupport

/// Save sequencing and versions: which save's outcome `saveError` shows, and the version each
/// save is derived from (one place for the version rules).
extension Reference {
  @usableFromInline
  func callSave(
    _ value: Value, context: SaveContext, derivedFrom derived: SharedVersion?, sequence: UInt64,
    completion: (@Sendable (Result<Void, any Error>) -> Void)?
  ) {
    guard let writer else {
      completion?(.success(()))
      return
    }
    // A version only this reference's own saves replaced since: go on over the newest of them.
    let base = derived.flatMap { derived in
      state.withLock { $0.lineage.base(derivedFrom: derived) }
    }
    // Weak: a pending save must not keep the reference alive, or releasing the last holder
    // would not cancel the subscription, which is the key's cue to flush pending writes.
    let continuation = SaveContinuation(
      observer: issueObserver, version: base,
      // A retry the key reports after this save failed is its outcome, unless a later save has
      // reported since (the guard in `finishSave`).
      resolvedLater: { [weak self] in self?.finishSave(sequence: sequence, result: $0) },
      versioned: { [weak self] outcome in
        if let written = outcome.version, case .success = outcome.outcome {
          self?.state.withLock { $0.lineage.ownWrite(derivedFrom: base, wrote: written) }
        }
        self?.finishSave(sequence: sequence, result: outcome.outcome)
        completion?(outcome.outcome)
      })
    writer.save(value, context: context, continuation: continuation)
  }

  @usableFromInline
  func finishSave(sequence: UInt64, result: Result<Void, any Error>) {
    let changed = state.withLock { state -> Bool in
      // A slow early save must not overwrite the outcome of a later one.
      guard sequence >= state.saveResultSequence else { return false }
      state.saveResultSequence = sequence
      let hadError = state.saveError != nil
      if case .failure(let error) = result {
        state.saveError = error
        return true
      }
      state.saveError = nil
      return hadError
    }
    if changed { notifyObservation(ObservedProperties.saveError) }
  }

  /// Clears `saveError` after a successful `update`, as a successful save does.
  func clearSaveError() {
    let changed = state.withLock { state -> Bool in
      guard state.saveError != nil else { return false }
      state.saveError = nil
      state.saveResultSequence = state.saveSequence
      return true
    }
    if changed { notifyObservation(ObservedProperties.saveError) }
  }

  func save() async throws {
    guard savesToKey else { return }
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let drain = state.withLock { state -> DrainStart? in
        state.saveSequence &+= 1
        let delivery = Delivery.save(
          state.value, stored: state.storedVersion, sequence: state.saveSequence,
          completion: { continuation.resume(with: $0) })
        return enqueue(delivery, in: &state)
      }
      if let drain { self.drain(drain) }
    }
  }

}
