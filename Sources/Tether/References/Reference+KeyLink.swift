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
      let version = beginLoad()
      reader.load(
        context: .initialValue(initialValue),
        continuation: LoadContinuation(
          observer: issueObserver,
          versioned: { [weak self] loaded in
            self?.finishLoad(
              loaded.outcome, storedVersion: loaded.version, startedAt: version, initial: true)
          }))
    }
    let subscription = reader.subscribe(
      context: .initialValue(initialValue),
      subscriber: SharedSubscriber(
        versioned: { [weak self] event, stored in self?.handle(event, storedVersion: stored) }))
    let replaced = state.withLock { state in
      defer { state.subscription = subscription }
      return state.subscription
    }
    replaced?.cancel()
  }

  private func beginLoad() -> UInt64 {
    let (version, changed) = state.withLock { state in
      defer { state.isLoading = true }
      return (state.version, !state.isLoading)
    }
    if changed { notifyObservation(ObservedProperties.isLoading) }
    return version
  }

  func load() async throws {
    guard let reader, !livesInReference else { return }
    let version = beginLoad()
    let observer = issueObserver
    let loaded = await withCheckedContinuation {
      (continuation: CheckedContinuation<Versioned<Result<Value?, any Error>>, Never>) in
      reader.load(
        context: .userInitiated,
        continuation: LoadContinuation(
          observer: observer, versioned: { continuation.resume(returning: $0) }))
    }
    finishLoad(loaded.outcome, storedVersion: loaded.version, startedAt: version, initial: false)
    if case .failure(let error) = loaded.outcome { throw error }
  }

  /// Applies a load result. A result is dropped if the value changed since the load began
  /// (a newer write or external update wins over an older read).
  func finishLoad(
    _ result: Result<Value?, any Error>, storedVersion: SharedVersion?, startedAt version: UInt64,
    initial: Bool
  ) {
    switch result {
    case .success(let loaded):
      apply(
        loaded ?? (initial ? nil : initialValue), clearingLoadError: true,
        onlyIfVersion: version, endLoading: true, storedVersion: .some(storedVersion))
    case .failure(let error):
      setLoadError(error, endLoading: true)
    }
  }

  /// Takes a value a caller loaded from the key itself (`init(require:)`).
  func applyLoaded(_ value: Value, storedVersion: SharedVersion?) {
    apply(
      value, clearingLoadError: true, onlyIfVersion: nil, endLoading: false,
      storedVersion: .some(storedVersion))
  }

  private func handle(_ event: SharedSubscriber<Value>.Event, storedVersion: SharedVersion?) {
    switch event {
    case .value(let value):
      apply(
        value, clearingLoadError: true, onlyIfVersion: nil, endLoading: false,
        storedVersion: .some(storedVersion))
    case .initialValue:
      apply(
        initialValue, clearingLoadError: true, onlyIfVersion: nil, endLoading: false,
        storedVersion: .some(storedVersion))
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

  private struct ApplyOutcome: Sendable {
    var valueChanged = false
    var observable = false
    var errorCleared = false
    var loadingEnded = false
    var drain: DrainStart?
  }

  /// Replaces the value from storage: notifies, never saves back.
  ///
  /// `storedVersion` (when given) is the key's version of the delivered value: it replaces the
  /// reference's in the same critical section, even if the value is equal, unless the load
  /// is stale.
  func apply(
    _ newValue: Value?, clearingLoadError: Bool, onlyIfVersion version: UInt64?,
    endLoading: Bool, storedVersion: SharedVersion?? = nil
  ) {
    let outcome = state.withLock { state -> ApplyOutcome in
      if let storedVersion, version == nil || version == state.version {
        state.storedVersion = storedVersion
        state.lineage.external(storedVersion)
      }
      var outcome = ApplyOutcome()
      outcome.observable = state.observable
      if endLoading, state.isLoading {
        state.isLoading = false
        outcome.loadingEnded = true
      }
      if clearingLoadError, state.loadError != nil {
        state.loadError = nil
        outcome.errorCleared = true
      }
      guard let newValue, version == nil || version == state.version else { return outcome }
      if isEquatable, isSame(state.value, newValue) { return outcome }
      state.value = newValue
      storeWord(newValue)
      outcome.valueChanged = true
      outcome.drain = recordChange(&state, save: false)
      return outcome
    }
    if outcome.loadingEnded { notifyObservation(ObservedProperties.isLoading) }
    if outcome.errorCleared { notifyObservation(ObservedProperties.loadError) }
    if outcome.valueChanged, outcome.observable { notifyObservation(ObservedProperties.value) }
    if let drain = outcome.drain { self.drain(drain) }
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
