import Synchronization
import TetherSupport

/// The key link: load, subscribe, and apply what the key delivers.
extension Reference {
  // MARK: Loading

  /// Loads with `.initialValue` and subscribes. Called once, right after creation, outside
  /// any lock. Without a key (or for in-memory values) there is nothing to do.
  func start(skipLoad: Bool = false) {
    guard let reader, !livesInReference else { return }
    if !skipLoad {
      let start = beginLoad()
      reader.load(
        context: .initialValue(initialValue),
        continuation: LoadContinuation(
          observer: issueObserver,
          versioned: { [weak self] loaded in
            self?.finishLoad(
              loaded.outcome, storedVersion: loaded.version, startedAt: start, initial: true)
          }))
    }
    let subscription = reader.subscribe(
      context: .initialValue(initialValue),
      subscriber: SharedSubscriber(
        versioned: { [weak self] event, stored in self?.handle(event, storedVersion: stored) },
        ownWrite: { [weak self] version in self?.ownWriteLanded(at: version) }))
    let replaced = state.withLock { state in
      defer { state.subscription = subscription }
      return state.subscription
    }
    replaced?.cancel()
  }

  /// When a load began: the value's change counter and the version engine's epoch.
  struct LoadStart: Sendable {
    var version: UInt64
    var epoch: UInt64
  }

  private func beginLoad() -> LoadStart {
    let (start, changed) = state.withLock { state in
      defer { state.isLoading = true }
      let start = LoadStart(version: state.version, epoch: state.saves?.engine.loadStart ?? 0)
      return (start, !state.isLoading)
    }
    if changed { notifyObservation(ObservedProperties.isLoading) }
    return start
  }

  func load() async throws {
    guard let reader, !livesInReference else { return }
    let start = beginLoad()
    let observer = issueObserver
    let loaded = await withCheckedContinuation {
      (continuation: CheckedContinuation<Versioned<Result<Value?, any Error>>, Never>) in
      reader.load(
        context: .userInitiated,
        continuation: LoadContinuation(
          observer: observer, versioned: { continuation.resume(returning: $0) }))
    }
    finishLoad(loaded.outcome, storedVersion: loaded.version, startedAt: start, initial: false)
    if case .failure(let error) = loaded.outcome { throw error }
  }

  /// A save was refused without the stored value: load it, so that every holder gets it.
  func reloadAfterRefusal() {
    guard let reader else { return }
    let start = beginLoad()
    reader.load(
      context: .userInitiated,
      continuation: LoadContinuation(
        observer: issueObserver,
        versioned: { [weak self] loaded in
          self?.finishLoad(
            loaded.outcome, storedVersion: loaded.version, startedAt: start, initial: false)
        }))
  }

  /// Applies a load result, as the version engine decides: a load answer overtaken by what
  /// happened since it began is dropped (see `VersionEngine.arrived`); one that answers after a
  /// local change made before anything was seen is not (that change's save was conditional on
  /// nothing being stored).
  func finishLoad(
    _ result: Result<Value?, any Error>, storedVersion: SharedVersion?, startedAt start: LoadStart,
    initial: Bool
  ) {
    switch result {
    case .success(let loaded):
      arrive(
        loaded ?? (initial ? nil : initialValue), version: storedVersion, load: start,
        endLoading: true)
    case .failure(let error):
      setLoadError(error, endLoading: true)
    }
  }

  /// Takes a value a caller loaded from the key itself (`init(require:)`, a re-key).
  func applyLoaded(_ value: Value, storedVersion: SharedVersion?) {
    arrive(value, version: storedVersion, load: nil, endLoading: false)
  }

  private func handle(_ event: SharedSubscriber<Value>.Event, storedVersion: SharedVersion?) {
    switch event {
    case .value(let value):
      arrive(value, version: storedVersion, load: nil, endLoading: false)
    case .initialValue:
      arrive(initialValue, version: storedVersion, load: nil, endLoading: false)
    case .failure(let error):
      setLoadError(error, endLoading: false)
    case .loading(let loading):
      let changed = state.withLock { state in
        defer { state.isLoading = loading }
        return state.isLoading != loading
      }
      if changed { notifyObservation(ObservedProperties.isLoading) }
    }
  }

  /// What taking values from storage changed, to announce outside the lock.
  struct TakeOutcome: Sendable {
    var valueChanged = false
    var observable = false
    var errorCleared = false
    var loadingEnded = false
    var drain: DrainStart?
  }

  /// A value the key delivered at `version` (`nil` value: a load that found nothing, which
  /// changes no value), from a subscription or a load that began at `load`. The version engine
  /// decides whether the holders take it now, after the save in flight, or never.
  func arrive(_ newValue: Value?, version: SharedVersion?, load: LoadStart?, endLoading: Bool) {
    let outcome = state.withLock { state -> TakeOutcome in
      var outcome = TakeOutcome()
      outcome.observable = state.observable
      if endLoading, state.isLoading {
        state.isLoading = false
        outcome.loadingEnded = true
      }
      if state.loadError != nil {
        state.loadError = nil
        outcome.errorCleared = true
      }
      let arrival: VersionEngine.Arrival
      if let saves = state.saves {
        arrival = saves.engine.arrived(
          version, loadStartedAt: load?.epoch,
          changedLocally: load.map { $0.version != state.version } ?? false)
        if arrival == .hold { saves.held = .some(newValue) }
      } else {
        arrival = load == nil || load?.version == state.version ? .take : .ignore
      }
      guard arrival == .take, let newValue else { return outcome }
      take(newValue, in: &state, outcome: &outcome)
      return outcome
    }
    finishTaking(outcome)
  }

  /// Replaces the value from storage, under the lock: queues the listeners' change, never a
  /// save.
  func take(_ newValue: Value, in state: inout State, outcome: inout TakeOutcome) {
    if isEquatable, isSame(state.value, newValue) { return }
    state.value = newValue
    storeWord(newValue)
    outcome.valueChanged = true
    let drain = recordChange(&state, save: false)
    if outcome.drain == nil { outcome.drain = drain }
  }

  /// Announces what `take` and `arrive` changed, outside the lock.
  func finishTaking(_ outcome: TakeOutcome) {
    if outcome.loadingEnded { notifyObservation(ObservedProperties.isLoading) }
    if outcome.errorCleared { notifyObservation(ObservedProperties.loadError) }
    if outcome.valueChanged, outcome.observable { notifyObservation(ObservedProperties.value) }
    if let drain = outcome.drain { self.drain(drain) }
  }

  /// Takes a value an atomic `update` stored, at `version` if the key said (then the engine
  /// knows it as this process's own write: the next save is conditional on it, and its
  /// delivery is not taken as someone else's).
  func applyUpdated(_ newValue: Value, version: SharedVersion? = nil) {
    let outcome = state.withLock { state -> TakeOutcome in
      if let version { state.saves?.engine.updated(to: version) }
      var outcome = TakeOutcome()
      outcome.observable = state.observable
      take(newValue, in: &state, outcome: &outcome)
      return outcome
    }
    finishTaking(outcome)
  }

  /// A write of this process's own that no save in flight asked for landed at `version` (a
  /// key's background retry, a write whose outcome was unknown): the holders keep their value,
  /// and the engine knows the version as theirs (see `VersionEngine.ownWriteLanded(at:)`).
  func ownWriteLanded(at version: SharedVersion) {
    state.withLock { $0.saves?.engine.ownWriteLanded(at: version) }
  }

  private func setLoadError(_ error: any Error, endLoading: Bool) {
    let loadingEnded = state.withLock { state -> Bool in
      state.loadError = error
      guard endLoading, state.isLoading else { return false }
      state.isLoading = false
      return true
    }
    notifyObservation(ObservedProperties.loadError)
    if loadingEnded { notifyObservation(ObservedProperties.isLoading) }
  }
}
