import TetherSupport

/// An `.etcd` key's store, built the first time the key is used.
///
/// Most key values are made only to find a reference: `@Shared(.etcd(...))` for a key that
/// already has one in the scope gets that reference, and the new value is never loaded,
/// subscribed or saved. Building a store for it (its lock, its write queue, its receipt key)
/// would be thrown away, so the store waits until the reference registry uses this key.
final class LazyEtcdKeyStore<Value: Sendable>: Sendable {
  private let build: @Sendable () -> EtcdKeyStore<Value>
  private let built = Lock<EtcdKeyStore<Value>?>(nil)

  init(_ build: @escaping @Sendable () -> EtcdKeyStore<Value>) {
    self.build = build
  }

  /// The store, built now if this is the key's first use.
  var store: EtcdKeyStore<Value> {
    if let store = built.withLock({ $0 }) { return store }
    let store = build()
    return built.withLock { built in
      if let raced = built { return raced }
      built = store
      return store
    }
  }

  /// Whether the store was built (the key was used).
  var isBuilt: Bool { built.withLock { $0 != nil } }
}
