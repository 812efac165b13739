import Synchronization
import TetherSupport

/// Saves: at most one in flight, the version each is conditional on, and what follows its end.
/// The version engine (`VersionEngine`) decides; this file performs its decisions, and keeps
/// which save's outcome `saveError` shows.
extension Reference {
  /// A change (or a `save()`) derived from `basis` asks to be saved: it is made now if no save
  /// is in flight, else it waits, coalesced with any other waiting change, for the one in
  /// flight to end. Called by the drainer, in mutation order, outside the lock.
  ///
  /// A `save()` that waits is not delayed by a throttle window: a key that holds the save in
  /// flight back (`ThrottledSaveKey`) is asked to write it now.
  @usableFromInline
  func requestSave(
    _ value: Value, context: SaveContext, basis: VersionEngine.Basis?, sequence: UInt64,
    completion: SaveCompletion?
  ) {
    guard writer != nil else {
      completion?(Versioned(.success(())))
      return
    }
    var flush = false
    let condition = state.withLock { state -> SharedVersion?? in
      guard let saves = state.saves, let basis else { return .some(nil) }
      if let condition = saves.engine.saveRequested(basis) { return condition }
      var pending =
        saves.pending
        ?? PendingSave(value: value, context: context, sequence: sequence, completions: [])
      pending.value = value
      pending.sequence = sequence
      if context == .userInitiated {
        pending.context = .userInitiated
        pending.urgent = true
        if saves.throttles {
          saves.flushWanted = true
          flush = true
        }
      }
      if let completion { pending.completions.append(completion) }
      saves.pending = pending
      return nil
    }
    if flush { flushThrottledSave() }
    guard let condition else { return }
    makeSave(
      value, context: context, condition: condition, basis: basis, sequence: sequence,
      completions: completion.map { [$0] } ?? [])
  }

  /// Waits until a change queued behind the save in flight was saved or refused (flushing a
  /// throttled save in flight, so that this takes no throttle window): an atomic `update`
  /// reads the stored value, which must include the changes made before it.
  func waitForQueuedSave() async {
    guard state.withLock({ $0.saves?.pending != nil }) else { return }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let flush = state.withLock { state -> Bool? in
        guard let saves = state.saves, var pending = saves.pending else { return nil }
        pending.completions.append { _ in continuation.resume() }
        pending.urgent = true
        saves.pending = pending
        saves.flushWanted = saves.throttles
        return saves.throttles
      }
      guard let flush else { return continuation.resume() }
      if flush { flushThrottledSave() }
    }
  }

  /// Asks the key to write a save it holds back for its throttle window now.
  private func flushThrottledSave() {
    (writer as? any ThrottledSaveKey)?.flushThrottledSave()
  }

  /// Hands a save to the key, conditional on `condition`: the engine's condition for `basis`
  /// (the key may ask again when it writes, `SaveContinuation.versionNow`).
  private func makeSave(
    _ value: Value, context: SaveContext, condition: SharedVersion?,
    basis: VersionEngine.Basis?, sequence: UInt64, completions: [SaveCompletion]
  ) {
    guard let writer else { return }
    let successor = SaveSuccessor()
    state.withLock { $0.saves?.successor = successor }
    // Weak: a save in flight must not keep the reference alive, or releasing the last holder
    // would not cancel the subscription, which is the key's cue to flush pending writes (a
    // change still waiting then is saved by the successor, see `handOverPendingSave`).
    // What the key finds when it asks again as it writes (`SaveContinuation.versionNow`).
    var currentVersion: (@Sendable () -> SharedVersion?)?
    if let basis {
      currentVersion = { [weak self] () -> SharedVersion? in
        guard let self, let now = self.condition(for: basis) else { return condition }
        return now
      }
    }
    let continuation = SaveContinuation(
      observer: issueObserver, version: condition,
      // A retry the key reports after this save failed is its outcome, unless a later save has
      // reported since (the guard in `finishSave`); the version it wrote is an own write.
      resolvedLater: { [weak self] result, version in
        guard let self else { return }
        if case .success = result, let version { ownWriteLanded(at: version) }
        finishSave(sequence: sequence, result: result)
      },
      currentVersion: currentVersion,
      versioned: { [weak self] outcome in
        guard let self else {
          var written: SharedVersion?
          if case .success = outcome.outcome { written = outcome.version }
          successor.saveEnded(written: written)
          return completions.forEach { $0(outcome) }
        }
        self.saveEnded(outcome, sequence: sequence, completions: completions)
      })
    writer.save(value, context: context, continuation: continuation)
    // A `save()` queued behind this save while it was being handed over found nothing to
    // flush yet (`requestSave`): flush it now.
    if context == .didSet,
      state.withLock({ $0.saves.map { $0.throttles && $0.flushWanted } ?? false })
    {
      flushThrottledSave()
    }
  }

  /// What the engine makes of a save's outcome.
  private static func end(
    of outcome: Versioned<Result<Void, any Error>>, observer: IssueReporting.Observer
  ) -> VersionEngine.SaveEnd {
    switch (outcome.outcome, outcome.conflict) {
    case (.success, _): return .saved(outcome.version)
    case (.failure, nil): return .failed
    case (.failure, .value(let stored)?):
      guard stored is Value else {
        reportIssue(
          "A save was refused with a stored value of type \(type(of: stored)), not \(Value.self);"
            + " loading the stored value instead.", observer: observer)
        return .refused(stored: nil, handedOver: false)
      }
      return .refused(stored: outcome.version, handedOver: true)
    case (.failure, .nothing?): return .refused(stored: outcome.version, handedOver: true)
    case (.failure, .unknown?): return .refused(stored: nil, handedOver: false)
    }
  }

  /// What a save's end leaves to do outside the lock.
  private struct AfterSaveWork: Sendable {
    var taken = TakeOutcome()
    var dropped: [SaveCompletion] = []
    var next: (PendingSave<Value>, SharedVersion?, VersionEngine.Basis?)?
    var load = false
  }

  /// The save in flight ended: the holders take what the engine says (a refusal's stored
  /// value, a value delivered meanwhile), and the coalesced change is saved or dropped.
  private func saveEnded(
    _ outcome: Versioned<Result<Void, any Error>>, sequence: UInt64,
    completions: [SaveCompletion]
  ) {
    let end = Self.end(of: outcome, observer: issueObserver)
    let work = state.withLock { state -> AfterSaveWork in
      var work = AfterSaveWork()
      guard let saves = state.saves else { return work }
      let pendingBasis = saves.engine.pending
      let after = saves.engine.saveEnded(end)
      work.taken.observable = state.observable
      if after.takeConflictValue {
        switch outcome.conflict {
        case .value(let stored as Value)?: take(stored, in: &state, outcome: &work.taken)
        default: take(initialValue, in: &state, outcome: &work.taken)
        }
      }
      let held = saves.held
      saves.held = nil
      if after.takeHeld, let held, let value = held {
        take(value, in: &state, outcome: &work.taken)
      }
      if after.dropPending {
        work.dropped = saves.pending?.completions ?? []
        saves.pending = nil
      }
      saves.flushWanted = false
      if let condition = after.next, let pending = saves.pending {
        saves.pending = nil
        saves.flushWanted = pending.urgent
        work.next = (pending, condition, pendingBasis)
      }
      work.load = after.load
      return work
    }
    finishTaking(work.taken)
    finishSave(sequence: sequence, result: outcome.outcome)
    completions.forEach { $0(outcome) }
    work.dropped.forEach { $0(outcome) }
    if work.load { reloadAfterRefusal() }
    if let (pending, condition, basis) = work.next {
      makeSave(
        pending.value, context: pending.context, condition: condition, basis: basis,
        sequence: pending.sequence, completions: pending.completions)
    }
  }

  /// The engine's condition for a save derived from `basis`, now.
  private func condition(for basis: VersionEngine.Basis) -> SharedVersion?? {
    state.withLock { state in state.saves.map { $0.engine.condition(for: basis) } }
  }

  /// The reference is going away: a change still waiting for the save in flight is saved
  /// when that save ends (`SaveSuccessor`), conditional on the version it wrote (or, if it
  /// wrote none, on the version the change was derived from), and a key that throttles is asked
  /// to write it at once. So it is never lost with its holders, nor does it overwrite a version
  /// they had not seen. Called by `deinit`.
  func handOverPendingSave() {
    let orphan = state.withLock {
      state -> (PendingSave<Value>, SharedVersion?, Bool, SaveSuccessor, Bool)? in
      guard let saves = state.saves, let pending = saves.pending,
        let basis = saves.engine.pending, let successor = saves.successor
      else { return nil }
      saves.pending = nil
      // Nothing can arrive any more: a change made since the last delivery builds on what the
      // save in flight writes.
      let buildsOnWrite = basis.generation == saves.engine.generation
      return (
        pending, saves.engine.condition(for: basis), buildsOnWrite, successor, saves.throttles
      )
    }
    guard let (pending, condition, buildsOnWrite, successor, throttles) = orphan,
      let writer
    else { return }
    let observer = issueObserver
    successor.orphan { written in
      writer.save(
        pending.value, context: pending.context,
        continuation: SaveContinuation(
          observer: observer, version: buildsOnWrite ? written ?? condition : condition,
          versioned: { outcome in pending.completions.forEach { $0(outcome) } }))
      if throttles { (writer as? any ThrottledSaveKey)?.flushThrottledSave() }
    }
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
    if case .failure(let error) = await saveNow(derivedFrom: nil).outcome { throw error }
  }

  /// Saves the current value, derived from `basis` (`nil`: from what it is derived from now),
  /// and waits for the outcome, the refusal included.
  func saveNow(derivedFrom basis: VersionEngine.Basis?) async -> Versioned<Result<Void, any Error>>
  {
    await withCheckedContinuation {
      (continuation: CheckedContinuation<Versioned<Result<Void, any Error>>, Never>) in
      let drain = state.withLock { state -> DrainStart? in
        state.saveSequence &+= 1
        let delivery = Delivery.save(
          state.value, basis: basis ?? state.basis, sequence: state.saveSequence,
          completion: { continuation.resume(returning: $0) })
        return enqueue(delivery, in: &state)
      }
      if let drain { self.drain(drain) }
    }
  }
}
