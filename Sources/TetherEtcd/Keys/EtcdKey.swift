import Foundation
import Tether

/// A shared value stored at one key of an etcd cluster: the same `@Shared` on every machine
/// that declares it.
///
/// ```swift
/// let cluster = EtcdCluster(endpoints: [URL(string: "http://10.0.0.1:2379")!])
/// @Shared(.etcd("/app/maintenance", in: cluster)) var maintenance = false
/// $maintenance.withLock { $0 = true }                    // compare-and-swap save
/// let n = try await $visits.update { $0 += 1; return $0 } // exact across machines
/// ```
///
/// - Load: a linearizable read; a missing key is the declared default.
/// - Changes: a watch from the last seen revision + 1 delivers every change once, in order,
///   across dropped streams, paused members and compaction (a compacted revision re-reads the
///   current value). A deleted key returns holders to their default.
/// - Saves (after `withLock`, and `save()`): a transaction that writes only if the key is
///   still the version this process last saw. If someone else changed it first, the save fails
///   with ``EtcdError/conflict(key:)`` in `saveError` and the newer value reaches the holders:
///   a stale writer never overwrites newer data. With ``EtcdWritePolicy/lastWriterWins`` saves
///   write unconditionally.
/// - `update`: compare-and-swap retried until it applies; never applied twice, even when an
///   answer is lost with a dying member (each attempt leaves a token beside the value, in the
///   same transaction, under the key followed by `"\u{0}tether-update-receipt/"` and a
///   random id; it is removed when the last holder goes away, and a role that may write the
///   key's prefix may write it).
/// - Lease: with `lease:`, the value is attached to a lease kept alive while a holder lives in
///   this process; when the process dies (or the last holder goes away) the key is deleted
///   once the lease expires (or at once), and every holder elsewhere returns to its default.
/// - Large values: a value of up to ``maximumValueSize`` bytes (16 MiB by default, more than
///   etcd's own 1.5 MiB request limit, `--max-request-bytes`, even raised to its recommended
///   10 MiB maximum) reaches every holder. A stored value over it is not decoded: it sets
///   `loadError` to ``EtcdValueTooLarge``, the holders keep their
///   value, and the watch goes on, so the next value within the limit arrives as usual. A
///   save over it fails with the same error and is not sent.
/// - Offline: the value stays, failures are reported (`saveError`, `loadError`), and the
///   newest pending value is written, with the same conflict check, once the cluster answers.
///   `saveError` keeps the failure until the next save succeeds.
/// - Tests: in an isolated scope (`.isolatedSharedState`, `withSharedStorage(.isolated)`) the
///   key never reaches `cluster`: it lives on the scope's in-memory cluster, with the same
///   semantics (TetherTesting's `InMemoryEtcd`), unless the test asked for the real one. In a
///   program that does not link TetherTesting, its requests there fail with
///   ``EtcdError/unavailable(reason:)-enum.case``, which says so.
public struct EtcdKey<Value: Sendable>: SharedKey, AtomicSharedKey {
  /// The key's identity: the cluster and the key.
  public struct ID: Hashable, Sendable {
    let cluster: ObjectIdentifier
    let key: String
  }

  /// The etcd key.
  public let key: String
  /// The cluster the value lives in.
  public let cluster: EtcdCluster
  /// The lease's time to live, if the value vanishes with its writer.
  public let lease: Duration?
  /// Whether saves check for newer data first.
  public let writePolicy: EtcdWritePolicy
  /// The most bytes a value of this key may hold: a stored value over it sets `loadError`
  /// to ``EtcdValueTooLarge`` and the holders keep their value; a save
  /// over it fails with that error. 16 MiB unless the key says otherwise, and never more
  /// than ``largestValueSize``.
  public let maximumValueSize: Int

  /// The largest ``maximumValueSize`` a key may have, 47 MiB: a cluster's connections read
  /// answers of at most 64 MiB, and a value travels in them base64-encoded (4 bytes for 3)
  /// inside JSON.
  public static var largestValueSize: Int { 47 << 20 }
  /// Built on first use: a key value the reference registry finds a reference for is
  /// dropped without one.
  let lazyStore: LazyEtcdKeyStore<Value>
  var store: EtcdKeyStore<Value> { lazyStore.store }

  init(
    key: String, cluster: EtcdCluster, lease: Duration?, writePolicy: EtcdWritePolicy,
    maximumValueSize: Int, decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data
  ) {
    self.key = key
    self.cluster = cluster
    self.lease = lease
    self.writePolicy = writePolicy
    let maximumValueSize = max(0, min(maximumValueSize, Self.largestValueSize))
    self.maximumValueSize = maximumValueSize
    // In an isolated scope (a test's), the scope's stand-in for the cluster: chosen now, while
    // the scope is the current one.
    let target = cluster.forCurrentScope
    let lastWriterWins = writePolicy == .lastWriterWins
    lazyStore = LazyEtcdKeyStore {
      EtcdKeyStore(
        cluster: target, name: key, decode: decode, encode: encode, lease: lease,
        lastWriterWins: lastWriterWins, maximumValueSize: maximumValueSize)
    }
  }

  /// The cluster and the key.
  public var id: ID { ID(cluster: ObjectIdentifier(cluster), key: key) }

  /// Reads the key (linearizable); a missing key is the initial value, whose version is the
  /// deletion (``/Tether/SharedVersion/deleted(at:)`` a revision), a version of its own.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    Task { [store] in
      do throws(EtcdError) {
        let (version, bytes) = try await store.load()
        guard let bytes else {
          return continuation.resumeReturningInitialValue(version: version.shared)
        }
        switch store.value(from: bytes) {
        case .success(let value): continuation.resume(returning: value, version: version.shared)
        case .failure(let error): continuation.resume(throwing: error)
        }
      } catch {
        continuation.resume(throwing: error)
      }
    }
  }

  /// Watches the key from the last seen revision + 1 until the last holder goes away.
  public func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    store.start(subscriber: subscriber)
    return SharedSubscription { [store] in store.stop() }
  }

  /// Writes `value` after the saves before it: compare-and-swap on the `mod_revision` it was
  /// derived from (`continuation.version`), unless last-writer-wins.
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    store.save(value, derivedFrom: continuation.version, continuation: continuation)
  }

  /// Applies `transform` to the latest stored value with compare-and-swap, retried until it
  /// applies (for up to 30 s of unavailability).
  public func update(
    _ transform: @escaping @Sendable (inout Value) throws -> Void, initialValue: Value,
    continuation: UpdateContinuation<Value>
  ) {
    store.update(transform, initialValue: initialValue, continuation: continuation)
  }
}

/// How an `.etcd` key's saves treat data written by others.
public enum EtcdWritePolicy: Sendable, Hashable {
  /// A save writes only over the version this process last saw; otherwise it fails with
  /// ``EtcdError/conflict(key:)`` and the newer value is loaded. The default.
  case compareAndSwap
  /// A save overwrites whatever is stored.
  case lastWriterWins
}

extension SharedReaderKey {
  /// A `Codable` value stored as JSON at `key` in `cluster`.
  ///
  /// ```swift
  /// @Shared(.etcd("/app/maintenance", in: cluster)) var maintenance = false
  /// @Shared(.etcd("/presence/worker-1", in: cluster, lease: .seconds(10))) var alive = false
  /// ```
  ///
  /// - Parameters:
  ///   - key: The etcd key.
  ///   - cluster: The cluster.
  ///   - lease: A time to live: the value vanishes when its writer dies (see ``EtcdKey``).
  ///   - writePolicy: ``EtcdWritePolicy/compareAndSwap`` (default) or last-writer-wins.
  ///   - maximumValueSize: The most bytes a value may hold (default 16 MiB; see
  ///     ``EtcdKey/maximumValueSize``).
  ///   - decoder: Decodes stored bytes.
  ///   - encoder: Encodes saves (default: JSON with sorted keys).
  public static func etcd<Value: Codable & Sendable>(
    _ key: String, in cluster: EtcdCluster, lease: Duration? = nil,
    writePolicy: EtcdWritePolicy = .compareAndSwap, maximumValueSize: Int = 16 << 20,
    decoder: JSONDecoder = JSONDecoder(), encoder: JSONEncoder = FileStorageKeyDefaults.encoder()
  ) -> Self where Self == EtcdKey<Value> {
    EtcdKey(
      key: key, cluster: cluster, lease: lease, writePolicy: writePolicy,
      maximumValueSize: maximumValueSize,
      decode: { try decoder.decode(Value.self, from: $0) }, encode: { try encoder.encode($0) })
  }

  /// A value stored at `key` in `cluster` in any format.
  ///
  /// ```swift
  /// @Shared(.etcd("/app/motd", in: cluster, decode: { String(decoding: $0, as: UTF8.self) },
  ///               encode: { Data($0.utf8) }))
  /// var motd = ""
  /// ```
  ///
  /// - Parameters:
  ///   - key: The etcd key.
  ///   - cluster: The cluster.
  ///   - lease: A time to live: the value vanishes when its writer dies (see ``EtcdKey``).
  ///   - writePolicy: ``EtcdWritePolicy/compareAndSwap`` (default) or last-writer-wins.
  ///   - maximumValueSize: The most bytes a value may hold (default 16 MiB; see
  ///     ``EtcdKey/maximumValueSize``).
  ///   - decode: Turns stored bytes into a value; a thrown error sets `loadError` and keeps
  ///     the holders' value.
  ///   - encode: Turns a value into bytes.
  public static func etcd<Value: Sendable>(
    _ key: String, in cluster: EtcdCluster, lease: Duration? = nil,
    writePolicy: EtcdWritePolicy = .compareAndSwap, maximumValueSize: Int = 16 << 20,
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data
  ) -> Self where Self == EtcdKey<Value> {
    EtcdKey(
      key: key, cluster: cluster, lease: lease, writePolicy: writePolicy,
      maximumValueSize: maximumValueSize, decode: decode, encode: encode)
  }
}
