import Streams
import Synchronization
import Tether
import TetherSupport

/// An error a test key reports on demand.
struct TestKeyError: Error, Equatable {
  let message: String
  init(_ message: String) { self.message = message }
}

/// The storage behind `TestKey`: a custom strategy written the way users write one, that
/// counts what Tether asks of it and lets a test inject loads, external changes and failures.
final class TestStore<Value: Sendable>: Sendable {
  enum LoadMode: Sendable {
    /// Resume inside `load` with the stored value (or the initial value).
    case immediate
    /// Keep the continuation; the test resumes it with `resumePendingLoads`.
    case deferred
    /// Resume inside `load` with this error.
    case failing(TestKeyError)
  }

  struct State {
    var stored: Value?
    var loadMode = LoadMode.immediate
    var saveFailure: TestKeyError?
    var loads = 0
    var subscribes = 0
    var cancels = 0
    var saves: [Value] = []
    var saveContexts: [SaveContext] = []
    var pendingLoads: [LoadContinuation<Value>] = []
    var subscribers: [Int: SharedSubscriber<Value>] = [:]
    var nextSubscriber = 0
  }

  let state: Lock<State>
  /// Called at the start of every save, outside any lock (for re-entrancy tests).
  let onSave: (@Sendable (Value) -> Void)?

  init(stored: Value? = nil, onSave: (@Sendable (Value) -> Void)? = nil) {
    state = Lock(State(stored: stored))
    self.onSave = onSave
  }

  var loads: Int { state.withLock { $0.loads } }
  var subscribes: Int { state.withLock { $0.subscribes } }
  var cancels: Int { state.withLock { $0.cancels } }
  var liveSubscriptions: Int { state.withLock { $0.subscribers.count } }
  var saves: [Value] { state.withLock { $0.saves } }
  var saveContexts: [SaveContext] { state.withLock { $0.saveContexts } }
  var stored: Value? { state.withLock { $0.stored } }

  func setLoadMode(_ mode: LoadMode) { state.withLock { $0.loadMode = mode } }
  func setSaveFailure(_ error: TestKeyError?) { state.withLock { $0.saveFailure = error } }

  /// Resumes every deferred load with `result`; returns how many there were.
  @discardableResult
  func resumePendingLoads(with result: Result<Value?, any Error>) -> Int {
    let pending = state.withLock { state in
      defer { state.pendingLoads = [] }
      return state.pendingLoads
    }
    for continuation in pending { continuation.resume(with: result) }
    return pending.count
  }

  /// Simulates another writer: stores `value` and tells every live subscriber.
  func externalWrite(_ value: Value) {
    let subscribers = state.withLock { state in
      state.stored = value
      return Array(state.subscribers.values)
    }
    for subscriber in subscribers { subscriber.yield(value) }
  }

  /// Simulates another writer deleting the value.
  func externalDelete() {
    let subscribers = state.withLock { state in
      state.stored = nil
      return Array(state.subscribers.values)
    }
    for subscriber in subscribers { subscriber.yieldReturningInitialValue() }
  }

  /// Simulates the watch failing.
  func externalFailure(_ error: TestKeyError) {
    let subscribers = state.withLock { Array($0.subscribers.values) }
    for subscriber in subscribers { subscriber.yield(throwing: error) }
  }
}

/// A custom key over a `TestStore`.
struct TestKey<Value: Sendable>: SharedKey {
  struct ID: Hashable, Sendable {
    let name: String
    let store: ObjectIdentifier
  }

  let name: String
  let store: TestStore<Value>

  init(_ name: String = "test", store: TestStore<Value>) {
    self.name = name
    self.store = store
  }

  var id: ID { ID(name: name, store: ObjectIdentifier(store)) }

  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    let (mode, stored) = store.state.withLock { state in
      state.loads += 1
      if case .deferred = state.loadMode { state.pendingLoads.append(continuation) }
      return (state.loadMode, state.stored)
    }
    switch mode {
    case .immediate:
      if let stored {
        continuation.resume(returning: stored)
      } else {
        continuation.resumeReturningInitialValue()
      }
    case .deferred: break
    case .failing(let error): continuation.resume(throwing: error)
    }
  }

  func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  )
    -> SharedSubscription
  {
    let token = store.state.withLock { state in
      state.subscribes += 1
      state.nextSubscriber += 1
      state.subscribers[state.nextSubscriber] = subscriber
      return state.nextSubscriber
    }
    let store = store
    return SharedSubscription {
      store.state.withLock { state in
        state.cancels += 1
        state.subscribers[token] = nil
      }
    }
  }

  func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    store.onSave?(value)
    let failure = store.state.withLock { state in
      state.saves.append(value)
      state.saveContexts.append(context)
      if state.saveFailure == nil { state.stored = value }
      return state.saveFailure
    }
    if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
  }
}
