// A third-party key written for swift-sharing, kept here unchanged except for its import
// (`import Sharing` -> `import Tether`): it is the porting check. It follows the shape of
// swift-sharing's documented custom strategies (a `SharedKey` conformance with `load`,
// `subscribe`, `save` and an `id`, plus a static helper for the leading-dot syntax), and its
// `ID` is a public struct that is not `Sendable`, as many ported keys declare it.
// Do not edit it to make it compile: fix Tether instead.

import Foundation
import TestSupport
import Tether

/// A process-wide key-value store of encoded values that tells observers about changes.
public final class KeyValueStore: Sendable {
  /// The store keys use unless given another.
  public static let shared = KeyValueStore()

  private struct State {
    var values: [String: Data] = [:]
    var observers: [UUID: (key: String, onChange: @Sendable (Data?) -> Void)] = [:]
  }
  private let state = LockedState(State())

  /// An empty store.
  public init() {}

  /// The data under `key`; setting it tells the key's observers.
  public subscript(key: String) -> Data? {
    get { state.withLock { $0.values[key] } }
    set {
      let observers = state.withLock { state in
        state.values[key] = newValue
        return state.observers.values.filter { $0.key == key }.map(\.onChange)
      }
      for onChange in observers { onChange(newValue) }
    }
  }

  /// Calls `onChange` with each new data under `key` until the token is removed.
  public func observe(_ key: String, onChange: @escaping @Sendable (Data?) -> Void) -> UUID {
    let token = UUID()
    state.withLock { $0.observers[token] = (key, onChange) }
    return token
  }

  /// Stops the observer `token` names.
  public func removeObserver(_ token: UUID) {
    state.withLock { _ = $0.observers.removeValue(forKey: token) }
  }
}

extension SharedKey {
  /// A value stored as JSON under `key` in a ``KeyValueStore``.
  public static func keyValue<Value: Codable & Sendable>(
    _ key: String, store: KeyValueStore = .shared
  ) -> Self where Self == KeyValueStoreKey<Value> {
    KeyValueStoreKey(key: key, store: store)
  }
}

/// A `SharedKey` over a ``KeyValueStore``.
public struct KeyValueStoreKey<Value: Codable & Sendable>: SharedKey {
  let key: String
  let store: KeyValueStore

  /// The identity of a stored value: its key in its store.
  public struct ID: Hashable {
    let key: String
    let store: ObjectIdentifier
  }

  /// The key in its store.
  public var id: ID { ID(key: key, store: ObjectIdentifier(store)) }

  /// Decodes the stored data, or resumes with the initial value when there is none.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    guard let data = store[key] else {
      continuation.resumeReturningInitialValue()
      return
    }
    continuation.resume(with: Result { try JSONDecoder().decode(Value.self, from: data) })
  }

  /// Reports each change of the stored data.
  public func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    let token = store.observe(key) { data in
      guard let data else {
        subscriber.yieldReturningInitialValue()
        return
      }
      subscriber.yield(with: Result { try JSONDecoder().decode(Value.self, from: data) })
    }
    let store = store
    return SharedSubscription { store.removeObserver(token) }
  }

  /// Encodes and stores `value`.
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    continuation.resume(with: Result { store[key] = try JSONEncoder().encode(value) })
  }
}
