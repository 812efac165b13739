import Foundation
import Streams
import Tether
import TetherHTTP
import TetherSupport

/// The whole life of one `.etcd` key in one process: what it knows of the stored version, its
/// watch (`EtcdKeyStore+Watching`), its saves (`+Saving`), its updates (`+Update`), its lease
/// (`+Lease`) and its serial write queue.
///
/// Invariants, kept where they are written:
/// - `knownAt` is the store revision up to which `newest`/`stored` describe the key. A range
///   read at revision R, a watch event at revision R and our own write at revision R all go
///   through ``observe(_:_:own:)``, which ignores anything at or below `knownAt`: so no change
///   is applied twice, and an echo of our own write is not delivered back to the holders.
/// - `newest` is the newest version this process has seen (recorded before holders are told
///   of it, and handed to them as the value's `SharedVersion`). A deletion is a version of its
///   own (``EtcdVersion/absent(since:)``), never "0".
/// - Which version a save is conditional on is the reference's `VersionEngine`'s decision
///   (`SaveContinuation.versionNow`, asked when the write starts, so that a save queued behind
///   a background retry builds on the retry's write), never this store's: the engine hears of
///   every write this store makes for its holders, with its version — a save's resume, an
///   `update`'s (`UpdateContinuation`'s versioned resume), a background retry's
///   (`SaveContinuation.resolvedLater(with:version:)`), and a write whose outcome was unknown
///   that lands late (`SharedSubscriber.yieldOwnWrite(version:)`). The store keeps no version
///   chain of its own; it only refuses, before etcd is asked, a save derived from a deletion
///   older than the newest version known (etcd's compare cannot tell deletions apart).
/// - `unresolved` holds the writes whose outcome is unknown (they may still land). This is not
///   version bookkeeping: such a write has no version until it lands, and then only its bytes
///   tell it from someone else's (the version it compared against says whether the key went
///   straight from that version to it). A version holding them that appears later is told to
///   the holders as their own write's (``Change/ownWrite(_:)``: at once, never held behind a
///   write, and again by a load before it answers with that version), and a save whose compare
///   fails on it writes over it. A write of ours that lands empties it: the others compared
///   against versions that are gone.
/// - While a write is in flight (`writeInFlight`), changes observed (watch events, reads) wait
///   for its answer: its own echo can arrive first. Once it is recorded, those at or below its
///   revision are its echo or were overwritten by it, and are dropped; the others are told. A
///   write that did not land tells them all. This needs no bytes: the answer gives the revision.
/// - Holders hear of changes in revision order (`published`): never an older value after a
///   newer one, whichever task observed them.
/// - Writes (saves, updates, the final lease revoke) run one at a time, in call order.
final class EtcdKeyStore<Value: Sendable>: Sendable {
  let cluster: EtcdCluster
  let name: String
  let key: Data
  let decode: @Sendable (Data) throws -> Value
  let encode: @Sendable (Value) throws -> Data
  let leaseTTL: Int64?
  let lastWriterWins: Bool
  /// The most bytes a value of this key may hold (`EtcdKey.maximumValueSize`): a stored value
  /// over it is not decoded (``value(from:)`` reports ``EtcdValueTooLarge``)
  /// and a save over it is not sent.
  let maximumValueSize: Int
  /// Where `update` leaves a per-attempt token in the same transaction as the value, so that
  /// after a lost answer it can tell whether its own write landed. Only this store writes it.
  let receiptKey: Data

  /// What a receipt key has after the value's key.
  static var receiptMarker: String { "\u{0}tether-update-receipt/" }

  struct State: Sendable {
    var knownAt: Int64 = 0
    var newest: EtcdVersion?
    var stored: Data?
    var subscriber: SharedSubscriber<Value>?
    var watcher: EtcdWatcher?
    var starting: Task<Void, Never>?
    var leaseID: Int64?
    var keepAlive: Task<Void, Never>?
    var saveGeneration: UInt64 = 0
    /// Background retries of failed saves waiting for their back-off (not in `writes` yet).
    var retriesWaiting = 0
    var wroteReceipt = false
    /// Writes of this process whose outcome is unknown, oldest first (see the invariants
    /// above).
    var unresolved: [Unresolved] = []
    /// Whether a write is in flight: changes observed meanwhile wait in `heldDuringWrite` for
    /// its answer (see the invariants above).
    var writeInFlight = false
    var heldDuringWrite: [Change] = []
  }
  /// Everything above, under one lock: the extensions in the other files read and write it
  /// only through `withLock`.
  let state = Lock(State())
  /// Changes on their way to the holders, told one at a time by whichever caller found no
  /// one telling (no lock is held while holders hear of a change).
  private let outbox = Lock(Outbox())

  private struct Outbox: Sendable {
    var changes: [Change] = []
    var telling = false
    /// The revision of the last change told: an older one is never told after it.
    var told: Int64 = 0
  }
  /// Saves, updates and the final lease revoke, one at a time, in call order.
  let writes = SerialWriteQueue()

  init(
    cluster: EtcdCluster, name: String, decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data, lease: Duration?, lastWriterWins: Bool,
    maximumValueSize: Int
  ) {
    self.cluster = cluster
    self.name = name
    key = Data(name.utf8)
    self.decode = decode
    self.encode = encode
    leaseTTL = lease.map { max(1, Int64(($0 / .seconds(1)).rounded(.up))) }
    self.lastWriterWins = lastWriterWins
    self.maximumValueSize = maximumValueSize
    // Beside the key, so that a role allowed to write the key (or its prefix) may write it.
    receiptKey = Data((name + EtcdKeyStore.receiptMarker + UUID().uuidString).utf8)
  }

  // MARK: Knowledge of the stored version

  /// What holders must hear of a newer version.
  enum Change: Sendable {
    case deleted(EtcdVersion)
    case value(Value, EtcdVersion)
    case undecodable(any Error, revision: Int64)
    /// A write of this process's whose outcome was unknown landed late, at this version: the
    /// holders keep their value and take the version as their own write's.
    case ownWrite(EtcdVersion)

    /// The revision holders hear of it at: they never hear of an older one after it.
    var revision: Int64 {
      switch self {
      case .deleted(let version), .value(_, let version), .ownWrite(let version):
        version.revision
      case .undecodable(_, let revision): revision
      }
    }
  }

  /// A write whose outcome is unknown: its bytes, and the version its compare was on (`nil`:
  /// none). If it lands, the key goes from `over` straight to it.
  struct Unresolved: Sendable {
    var bytes: Data
    var over: EtcdVersion?
  }

  /// How many unresolved writes are remembered; older ones can no longer land once a newer
  /// write's compare moved the key on.
  static var unresolvedLimit: Int { 8 }

  /// Records that at `revision` the key was `keyValue` (`nil`: absent). Returns what changed
  /// when this is newer than what was known (holders must hear of it), else `nil`.
  ///
  /// A version that does not decode (or is over ``maximumValueSize``) is known but never
  /// becomes the base of a compare-and-swap save: bad data is not overwritten by a holder
  /// that could not read it.
  @discardableResult
  func observe(_ revision: Int64, _ keyValue: EtcdKeyValue?, own: Bool = false) -> Change? {
    let version = EtcdVersion(keyValue, at: revision)
    if own {
      let held = state.withLock { state -> [Change] in
        // A write that landed: the earlier ones whose outcome was unknown compared against
        // versions that are gone now, so they can no longer land.
        state.unresolved.removeAll()
        if revision > state.knownAt {
          state.knownAt = revision
          state.newest = version
          state.stored = keyValue?.value
        }
        return releaseHeld(&state)
      }
      // Changes seen during the write at or below its revision are its echo, or were
      // overwritten by it.
      for change in held where change.revision > revision { publish(change) }
      return nil
    }
    let decoded: Change =
      switch keyValue.map({ value(from: $0.value) }) {
      case nil: .deleted(version)
      case .success(let value): .value(value, version)
      case .failure(let error): .undecodable(error, revision: version.revision)
      }
    return state.withLock { state -> Change? in
      guard revision > state.knownAt else { return nil }
      state.knownAt = revision
      // A newer read of the same version is no change of someone else's (nor is a read of
      // the deletion already known: etcd cannot tell it from another).
      if version == state.newest || (version.isAbsent && state.newest?.isAbsent == true) {
        return nil
      }
      var change = decoded
      if let keyValue,
        let index = state.unresolved.firstIndex(where: { $0.bytes == keyValue.value })
      {
        // An earlier write of ours whose outcome was unknown, landing late: the ones before it
        // compared against versions that are gone now. It stays known (a save's failed compare
        // may still meet it) until a write of ours lands.
        state.unresolved.removeFirst(index)
        change = .ownWrite(version)
      } else if case .undecodable = decoded {
        // Known, but never the base of a save.
        return decoded
      }
      state.newest = version
      state.stored = keyValue?.value
      // Told at once, even during a write: it carries no value, and a load may answer with
      // its version before the write ends.
      if case .ownWrite = change { return change }
      guard state.writeInFlight else { return change }
      state.heldDuringWrite.append(change)
      return nil
    }
  }

  /// The changes held during the write in flight, which ends.
  func releaseHeld(_ state: inout State) -> [Change] {
    defer {
      state.writeInFlight = false
      state.heldDuringWrite = []
    }
    return state.heldDuringWrite
  }

  func observe(_ event: EtcdEvent) -> Change? {
    observe(event.keyValue.modRevision, event.kind == .put ? event.keyValue : nil)
  }

  /// Decodes stored bytes, unless there are more than ``maximumValueSize`` of them.
  func value(from bytes: Data) -> Result<Value, any Error> {
    guard bytes.count <= maximumValueSize else {
      return .failure(
        EtcdValueTooLarge(key: name, size: bytes.count, limit: maximumValueSize))
    }
    do {
      return .success(try decode(bytes))
    } catch {
      return .failure(EtcdError.undecodable(key: name, reason: "\(error)"))
    }
  }

  /// Encodes a value to save: an error when it cannot be encoded, or when it holds more than
  /// ``maximumValueSize`` bytes (no holder of the key would read it back).
  func bytes(of value: Value) throws -> Data {
    let bytes = try encode(value)
    guard bytes.count <= maximumValueSize else {
      throw EtcdValueTooLarge(key: name, size: bytes.count, limit: maximumValueSize)
    }
    return bytes
  }

  /// Tells the holders about a change, unless they already heard of a newer one.
  func publish(_ change: Change?) {
    guard let change, let subscriber = state.withLock({ $0.subscriber }) else { return }
    let tells = outbox.withLock { outbox in
      outbox.changes.append(change)
      defer { outbox.telling = true }
      return !outbox.telling
    }
    guard tells else { return }
    while let next = nextChange() {
      switch next {
      case .deleted(let version):
        subscriber.yieldReturningInitialValue(version: version.shared)
      case .value(let value, let version): subscriber.yield(value, version: version.shared)
      case .undecodable(let error, _): subscriber.yield(throwing: error)
      case .ownWrite(let version): subscriber.yieldOwnWrite(version: version.shared)
      }
    }
  }

  /// The next change to tell, skipping any older than one already told; `nil` (and no one
  /// telling) when none is left.
  private func nextChange() -> Change? {
    outbox.withLock { outbox in
      while !outbox.changes.isEmpty {
        let change = outbox.changes.removeFirst()
        guard change.revision >= outbox.told else { continue }
        outbox.told = change.revision
        return change
      }
      outbox.telling = false
      return nil
    }
  }

  /// A linearizable read of the key, recorded; holders hear of it if it is newer.
  func read(publishing: Bool) async throws(EtcdError) -> (revision: Int64, EtcdKeyValue?) {
    let range = try await cluster.range(key)
    let keyValue = range.keyValues.first
    let change = observe(range.revision, keyValue)
    if publishing { publish(change) }
    return (range.revision, keyValue)
  }

  /// What a load answers: a linearizable read, or what this process learnt since, if newer
  /// (a watch event that arrived meanwhile), with the version holders know it by.
  func load() async throws(EtcdError) -> (EtcdVersion, Data?) {
    let (revision, keyValue) = try await read(publishing: false)
    let read = EtcdVersion(keyValue, at: revision)
    let (answer, subscriber, own) = state.withLock { state in
      // A late-landing write of ours, the read's or the watch's (whose tell may still be on
      // its way), is told here first: the holders must know its version as theirs before the
      // load answers with it, or they would take its older value for someone else's.
      let unresolved = state.unresolved
      let own = { (bytes: Data?) in unresolved.contains { $0.bytes == bytes } }
      guard let newest = state.newest else {
        return ((read, keyValue?.value), state.subscriber, own(keyValue?.value))
      }
      // A version that does not decode is never `newest`: the load reports it.
      if let keyValue, keyValue.modRevision > newest.revision {
        return ((read, keyValue.value), state.subscriber, own(keyValue.value))
      }
      return ((newest, state.stored), state.subscriber, own(state.stored))
    }
    if own, answer.1 != nil { subscriber?.yieldOwnWrite(version: answer.0.shared) }
    return answer
  }
}
