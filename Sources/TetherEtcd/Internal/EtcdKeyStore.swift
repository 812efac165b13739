import Foundation
import Streams
import Tether
import TetherHTTP
import TetherSupport

/// The whole life of one `.etcd` key in one process: what it knows of the stored version, its
/// watch, its lease and its serial write queue.
///
/// Invariants, kept where they are written:
/// - `knownAt` is the store revision up to which `modRevision`/`stored` describe the key. A
///   range read at revision R, a watch event at revision R and our own write at revision R all
///   go through ``observe(_:_:)``, which ignores anything at or below `knownAt`: so no change
///   is applied twice, and an echo of our own write is not delivered back to the holders.
/// - `modRevision` is the newest version this process has seen (recorded before holders are
///   told of it, and handed to them as the value's `SharedVersion`).
/// - `chainStart` is the newest version written by someone else; every version from it to
///   `modRevision` is this process's own. A save derived from a version in that run writes
///   over `modRevision` (only our own writes came since); one derived from an older version
///   writes over that older version, so its compare fails: it never saw the newer value.
/// - `unresolved` holds the bytes of writes whose outcome is unknown (they may still land):
///   a version holding them that appears later is this process's own, not someone else's.
/// - Writes (saves, updates, the final lease revoke) run one at a time, in call order.
final class EtcdKeyStore<Value: Sendable>: Sendable {
  let cluster: EtcdCluster
  let name: String
  let key: Data
  let decode: @Sendable (Data) throws -> Value
  let encode: @Sendable (Value) throws -> Data
  let leaseTTL: Int64?
  let lastWriterWins: Bool
  /// Where `update` leaves a per-attempt token in the same transaction as the value, so that
  /// after a lost answer it can tell whether its own write landed. Only this store writes it.
  let receiptKey: Data

  /// What a receipt key has after the value's key.
  static var receiptMarker: String { "\u{0}tether-update-receipt/" }

  private struct State: Sendable {
    var knownAt: Int64 = 0
    var modRevision: Int64?
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
    /// The newest version written by someone else (see the invariants above).
    var chainStart: Int64?
    /// Bytes of saves whose outcome is unknown, oldest first (see the invariants above).
    var unresolved: [Data] = []
    /// The bytes of the write in flight: its watch event may arrive before its answer, and
    /// must not be taken for someone else's change (or handed back to the holders, whose
    /// value may already be newer).
    var inFlight: Data?
  }
  private let state = Lock(State())
  /// Saves, updates and the final lease revoke, one at a time, in call order.
  private let writes = SerialWriteQueue()

  init(
    cluster: EtcdCluster, name: String, decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data, lease: Duration?, lastWriterWins: Bool
  ) {
    self.cluster = cluster
    self.name = name
    key = Data(name.utf8)
    self.decode = decode
    self.encode = encode
    leaseTTL = lease.map { max(1, Int64(($0 / .seconds(1)).rounded(.up))) }
    self.lastWriterWins = lastWriterWins
    // Beside the key, so that a role allowed to write the key (or its prefix) may write it.
    receiptKey = Data((name + EtcdKeyStore.receiptMarker + UUID().uuidString).utf8)
  }

  // MARK: Knowledge of the stored version

  /// What holders must hear of a newer version.
  enum Change: Sendable {
    case deleted(revision: Int64)
    case value(Value, revision: Int64)
    case undecodable(EtcdError)
  }

  /// How many unresolved writes are remembered; older ones can no longer land once a newer
  /// write's compare moved the key on.
  private static var unresolvedLimit: Int { 8 }

  /// Records that at `revision` the key was `keyValue` (`nil`: absent). Returns what changed
  /// when this is newer than what was known (holders must hear of it), else `nil`.
  ///
  /// A version that does not decode is known but never becomes the base of a
  /// compare-and-swap save: bad data is not overwritten by a holder that could not read it.
  @discardableResult
  func observe(_ revision: Int64, _ keyValue: EtcdKeyValue?, own: Bool = false) -> Change? {
    if own {
      state.withLock { state in
        // From here the version is recorded, so its watch event is recognised by revision.
        state.inFlight = nil
        // A write that landed: the earlier ones whose outcome was unknown compared against
        // versions that are gone now, so they can no longer land.
        state.unresolved.removeAll()
        guard revision > state.knownAt else { return }
        state.knownAt = revision
        if state.chainStart == nil { state.chainStart = state.modRevision }
        state.modRevision = keyValue?.modRevision ?? 0
        state.stored = keyValue?.value
      }
      return nil
    }
    let modRevision = keyValue?.modRevision ?? 0
    let change: Change =
      switch keyValue.map({ value(from: $0.value) }) {
      case nil: .deleted(revision: modRevision)
      case .success(let value): .value(value, revision: modRevision)
      case .failure(let error): .undecodable(error)
      }
    return state.withLock { state -> Change? in
      guard revision > state.knownAt else { return nil }
      state.knownAt = revision
      if let keyValue, modRevision != state.modRevision,
        keyValue.value == state.inFlight || state.unresolved.contains(keyValue.value)
      {
        // The write in flight seen before its answer, or an earlier write of ours whose
        // outcome was unknown landing late: ours, and holders already have it or newer.
        if let index = state.unresolved.firstIndex(of: keyValue.value) {
          state.unresolved.removeFirst(index + 1)
        }
        if state.chainStart == nil { state.chainStart = state.modRevision }
        state.modRevision = modRevision
        state.stored = keyValue.value
        return nil
      }
      // A newer read of the same version is no change of someone else's.
      guard modRevision != state.modRevision else { return nil }
      // Someone else's version: every save derived from an older one must now fail.
      state.chainStart = modRevision
      if case .undecodable = change { return change }
      state.modRevision = modRevision
      state.stored = keyValue?.value
      return change
    }
  }

  /// The version a save derived from `version` must find stored: the newest one when only
  /// this process's own writes came after `version`, else `version` itself (whose compare then
  /// fails: the save never saw the newer value). `nil` when nothing was ever seen.
  private func base(derivedFrom version: Int64?) -> Int64? {
    state.withLock { state in
      guard let version else { return nil }
      if let start = state.chainStart, let newest = state.modRevision, version >= start,
        version <= newest
      {
        return newest
      }
      return version
    }
  }

  /// Remembers `bytes` as a write whose outcome is unknown.
  private func markUnresolved(_ bytes: Data) {
    state.withLock { state in
      state.unresolved.removeAll { $0 == bytes }
      state.unresolved.append(bytes)
      if state.unresolved.count > Self.unresolvedLimit { state.unresolved.removeFirst() }
    }
  }

  func observe(_ event: EtcdEvent) -> Change? {
    observe(event.keyValue.modRevision, event.kind == .put ? event.keyValue : nil)
  }

  /// Marks `bytes` as the write in flight while `body` runs, and until the caller records the
  /// outcome (``observe(_:_:own:)`` with `own`, or ``endWrite()``): an echo arriving between
  /// the answer and the record is still ours.
  private func writing<R>(
    _ bytes: Data, _ body: () async throws(EtcdError) -> R
  ) async throws(EtcdError) -> R {
    state.withLock { $0.inFlight = bytes }
    do {
      return try await body()
    } catch {
      endWrite()
      throw error
    }
  }

  private func endWrite() { state.withLock { $0.inFlight = nil } }

  /// Decodes stored bytes.
  func value(from bytes: Data) -> Result<Value, EtcdError> {
    do {
      return .success(try decode(bytes))
    } catch {
      return .failure(.undecodable(key: name, reason: "\(error)"))
    }
  }

  /// Tells the holders about a change.
  private func publish(_ change: Change?) {
    guard let change, let subscriber = state.withLock({ $0.subscriber }) else { return }
    switch change {
    case .deleted(let revision):
      subscriber.yieldReturningInitialValue(version: SharedVersion(revision))
    case .value(let value, let revision): subscriber.yield(value, version: SharedVersion(revision))
    case .undecodable(let error): subscriber.yield(throwing: error)
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

  // MARK: Watching

  func start(subscriber: SharedSubscriber<Value>) {
    state.withLock { $0.subscriber = subscriber }
    let starting = Task {
      var from = state.withLock { $0.knownAt }
      if from == 0 {
        // Nothing read yet: read once, so the watch starts right after a known state.
        var failures = 0
        while !Task.isCancelled {
          do throws(EtcdError) {
            from = try await read(publishing: true).revision
            break
          } catch {
            subscriber.yield(throwing: error)
            failures += 1
            try? await Task.sleep(for: Self.readBackoff.delay(afterFailures: failures) ?? .zero)
          }
        }
        if Task.isCancelled { return }
      }
      let watcher = EtcdWatcher(
        cluster: cluster, key: key, rangeEnd: nil, startRevision: from + 1,
        handlers: .init(
          deliver: { [weak self] events in
            guard let self else { return }
            for event in events { self.publish(self.observe(event)) }
          },
          resync: { [weak self] () throws(EtcdError) -> Int64 in
            guard let self else { throw .cancelled }
            return try await self.read(publishing: true).revision + 1
          },
          report: { [weak self] error in self?.report(error) }))
      let cancelled = state.withLock { state in
        guard state.subscriber != nil else { return true }
        state.watcher = watcher
        return false
      }
      if cancelled { watcher.cancel() }
    }
    state.withLock { $0.starting = starting }
  }

  /// A failing watch sets `loadError`; when it recovers, the last known value clears it
  /// (unless a local change still waits to be written, which it would undo).
  private func report(_ error: EtcdError?) {
    let (subscriber, stored, revision, pending) = state.withLock {
      state -> (_, Data??, Int64, _) in
      (
        state.subscriber, state.modRevision == nil ? nil : state.stored, state.modRevision ?? 0,
        state.retriesWaiting > 0
      )
    }
    guard let subscriber else { return }
    if let error { return subscriber.yield(throwing: error) }
    guard !pending, writes.pendingCount == 0, let stored else { return }
    guard let stored else { return publish(.deleted(revision: revision)) }
    if case .success(let value) = value(from: stored) {
      publish(.value(value, revision: revision))
    }
  }

  /// The last holder is gone: stop watching and renewing; once the queued writes are done,
  /// revoke the lease (the value vanishes with its writer) and remove the update receipt.
  func stop() {
    let (watcher, starting, keepAlive) = state.withLock { state in
      defer {
        state.subscriber = nil
        state.watcher = nil
        state.starting = nil
      }
      return (state.watcher, state.starting, state.keepAlive)
    }
    starting?.cancel()
    watcher?.cancel()
    writes.enqueue { [self] in
      keepAlive?.cancel()
      let (lease, receipt) = state.withLock { state in
        defer {
          state.leaseID = nil
          state.keepAlive = nil
        }
        return (state.leaseID, state.wroteReceipt)
      }
      if let lease { try? await cluster.revokeLease(lease) }
      if receipt { _ = try? await cluster.delete(receiptKey) }
    }
  }

  // MARK: Writing

  /// Saves `value` after the writes before it: compare-and-swap on the last seen version
  /// (or unconditionally for last-writer-wins). A transient failure is reported and the value
  /// is written again in the background until it lands, unless a newer save supersedes it.
  ///
  /// `version` is the one the holders' value was derived from (`SaveContinuation.version`, captured
  /// under the reference's lock when the body ran): a change of someone else's that arrived
  /// while the body ran makes this save a conflict, not an overwrite.
  func save(_ value: Value, derivedFrom version: SharedVersion?, continuation: SaveContinuation) {
    let bytes: Data
    do {
      bytes = try encode(value)
    } catch {
      return continuation.resume(throwing: error)
    }
    let seen = version?.number
    let generation = state.withLock { state in
      state.saveGeneration &+= 1
      return state.saveGeneration
    }
    writes.enqueue { [self] in
      do throws(EtcdError) {
        try await write(bytes, derivedFrom: seen)
        continuation.resume()
      } catch {
        continuation.resume(throwing: error)
        if error.isTransient {
          retry(bytes, seen: seen, generation: generation, attempt: 1, reportingTo: continuation)
        }
      }
    }
  }

  /// The back-off between background attempts of a save that failed transiently.
  private static var saveBackoff: Backoff {
    Backoff(initial: .milliseconds(200), maximum: .seconds(5), maximumFailures: 120)
  }
  /// The back-off of `update` after a transient failure, and between compare-and-swap
  /// retries once many writers contend for one key.
  private static var updateBackoff: Backoff {
    Backoff(initial: .milliseconds(50), maximum: .milliseconds(250))
  }
  /// The back-off of a first read that failed before a watch can start.
  static var readBackoff: Backoff { Backoff(initial: .milliseconds(250), maximum: .seconds(2)) }
  private static var contentionBackoff: Backoff {
    Backoff(initial: .milliseconds(2), maximum: .milliseconds(50))
  }

  /// Writes `bytes` again after a back-off, while no newer save was made. The save's
  /// `continuation` (resumed with the first failure) hears how it ended: `saveError` clears
  /// when it lands, and says so when it is refused (a conflict).
  private func retry(
    _ bytes: Data, seen: Int64?, generation: UInt64, attempt: Int,
    reportingTo continuation: SaveContinuation
  ) {
    guard Self.saveBackoff.delay(afterFailures: attempt, random: 0) != nil else { return }
    state.withLock { $0.retriesWaiting += 1 }
    Task { [self] in
      try? await Task.sleep(for: Self.saveBackoff.delay(afterFailures: attempt) ?? .seconds(5))
      // Queued before it stops waiting, so `report` never finds neither.
      writes.enqueue { [self] in
        guard state.withLock({ $0.saveGeneration == generation }) else { return }
        do throws(EtcdError) {
          try await write(bytes, derivedFrom: seen)
          continuation.resolvedLater(with: .success(()))
        } catch {
          if error.isTransient {
            retry(
              bytes, seen: seen, generation: generation, attempt: attempt + 1,
              reportingTo: continuation)
          } else {
            continuation.resolvedLater(with: .failure(error))
          }
        }
      }
      state.withLock { $0.retriesWaiting -= 1 }
    }
  }

  /// One save of `bytes`, resolving lost answers: a write whose answer was lost is sent again
  /// with the same compare; if that compare fails because the key already holds exactly these
  /// bytes, the first one landed. If it holds the bytes of an earlier save of ours whose
  /// outcome was unknown, that one landed late: the write goes on over it.
  private func write(_ bytes: Data, derivedFrom seen: Int64?) async throws(EtcdError) {
    // The cluster's `timeout` bounds the whole save, resends included: without a quorum the
    // holders hear of it (`saveError`) within that time, and the background retry goes on.
    let deadline = ContinuousClock.now + cluster.timeout
    func remaining() -> Duration { max(.milliseconds(1), deadline - ContinuousClock.now) }
    let lease = try await currentLease()
    if lastWriterWins {
      var lost = 0
      while true {
        do throws(EtcdError) {
          let revision = try await writing(bytes) { () throws(EtcdError) in
            try await cluster.put(key, bytes, lease: lease, timeout: remaining())
          }
          observe(revision, ownKeyValue(bytes, revision: revision), own: true)
          return
        } catch {
          guard case .outcomeUnknown = error, lost < 3, ContinuousClock.now < deadline else {
            throw error
          }
          lost += 1
        }
      }
    }
    var base = self.base(derivedFrom: seen)
    if base == nil {
      // Nothing seen yet (the load failed): only an absent key, or one that already holds
      // these bytes, may be written without overwriting a version nobody here has seen.
      let range = try await cluster.range(key)
      let current = range.keyValues.first
      let change = observe(range.revision, current)
      if let current, current.value != bytes {
        publish(change)
        throw .conflict(key: name)
      }
      base = current?.modRevision ?? 0
    }
    var uncertain = false
    var lost = 0
    var lateLandings = 0
    while true {
      let result: EtcdTxnResult
      do throws(EtcdError) {
        result = try await writing(bytes) { () throws(EtcdError) in
          try await cluster.txn(
            compare: [EtcdTxn.modRevisionEquals(key, base ?? 0)],
            success: [EtcdTxn.put(key, bytes, lease: lease)], failure: [EtcdTxn.range(key)],
            timeout: remaining())
        }
      } catch {
        // A transient failure may still commit (a leader without quorum keeps the entry in its
        // log and commits it once the followers are back): remember it as possibly ours.
        if error.isTransient { markUnresolved(bytes) }
        guard case .outcomeUnknown = error, lost < 3, ContinuousClock.now < deadline else {
          throw error
        }
        uncertain = true
        lost += 1
        continue
      }
      if result.succeeded {
        observe(result.revision, ownKeyValue(bytes, revision: result.revision), own: true)
        return
      }
      endWrite()
      let current = result.ranges.first?.first
      // The watch may have recognised the stored version as ours already, between this
      // compare and its answer (a late landing commits together with the compare that fails
      // on it): then it is the newest version, and only our own writes came after `seen`.
      let recognised = current.map { self.base(derivedFrom: seen) == $0.modRevision } ?? false
      if let current, current.value == bytes,
        uncertain || recognised || state.withLock({ $0.unresolved.contains(bytes) })
      {
        observe(result.revision, current, own: true)
        return
      }
      if let current, lateLandings < 3, current.modRevision != base,
        recognised
          || (state.withLock({ $0.unresolved.contains(current.value) })
            && self.base(derivedFrom: seen) == base)
      {
        // An earlier save of ours landed late over the version this one was derived from (or
        // over our own writes since): ours, not someone else's. Go on over it.
        observe(result.revision, current, own: true)
        lateLandings += 1
        base = current.modRevision
        continue
      }
      publish(observe(result.revision, current))
      throw .conflict(key: name)
    }
  }

  private func ownKeyValue(_ bytes: Data, revision: Int64) -> EtcdKeyValue {
    EtcdKeyValue(
      key: key, value: bytes, createRevision: 0, modRevision: revision, version: 0, lease: 0)
  }

  // MARK: Updating atomically

  /// Applies `transform` to the latest stored value with compare-and-swap until it applies.
  ///
  /// Never twice: each attempt writes a fresh token to ``receiptKey`` in the same transaction.
  /// After a lost answer the attempt is remembered; a later read (or the failure branch of a
  /// later attempt) that finds one of those tokens in the receipt means that attempt landed,
  /// and its value is the result. An attempt that lands later than we looked cannot apply
  /// once a newer attempt has changed the key (its compare fails), and if it lands first, the
  /// newer attempt's compare fails and shows its token.
  func update(
    _ transform: @escaping @Sendable (inout Value) throws -> Void, initialValue: Value,
    continuation: UpdateContinuation<Value>
  ) {
    writes.enqueue { [self] in
      let deadline = ContinuousClock.now + .seconds(30)
      var uncertain: [String: Value] = [:]
      var current: (base: Int64, bytes: Data?)? = state.withLock { state in
        state.modRevision.map { ($0, state.stored) }
      }
      var attempt = 0
      while true {
        attempt += 1
        do throws(EtcdError) {
          if current == nil {
            let read = try await cluster.txn(
              compare: [], success: [EtcdTxn.range(key), EtcdTxn.range(receiptKey)], failure: [],
              readOnly: true)
            let keyValue = read.ranges.first?.first
            if let token = read.ranges.last?.first.map({ String(decoding: $0.value, as: UTF8.self) }
            ),
              let landed = uncertain[token]
            {
              observe(read.revision, keyValue)
              return continuation.resume(returning: landed)
            }
            publish(observe(read.revision, keyValue))
            current = (keyValue?.modRevision ?? 0, keyValue?.value)
          }
          var value = initialValue
          if let bytes = current?.bytes {
            switch self.value(from: bytes) {
            case .success(let stored): value = stored
            case .failure(let error): return continuation.resume(throwing: error)
            }
          }
          do {
            try transform(&value)
          } catch {
            return continuation.resume(throwing: error)
          }
          let bytes: Data
          do {
            bytes = try encode(value)
          } catch {
            return continuation.resume(throwing: error)
          }
          let token = UUID().uuidString
          let lease = try await currentLease()
          state.withLock { $0.wroteReceipt = true }
          let result: EtcdTxnResult
          do throws(EtcdError) {
            let base = current?.base ?? 0
            result = try await writing(bytes) { () throws(EtcdError) in
              try await cluster.txn(
                compare: [EtcdTxn.modRevisionEquals(key, base)],
                success: [
                  EtcdTxn.put(key, bytes, lease: lease),
                  EtcdTxn.put(receiptKey, Data(token.utf8)),
                ],
                failure: [EtcdTxn.range(key), EtcdTxn.range(receiptKey)])
            }
          } catch {
            // A lost answer may still commit later (a leader without quorum keeps the entry in
            // its log): the token tells, when the key is read again. `unavailable` means no
            // member took the request (refused, or no leader), so nothing can land.
            if error.isTransient, !error.isUnavailable { uncertain[token] = value }
            throw error
          }
          if result.succeeded {
            observe(result.revision, ownKeyValue(bytes, revision: result.revision), own: true)
            return continuation.resume(returning: value)
          }
          endWrite()
          let keyValue = result.ranges.first?.first
          if let receipt = result.ranges.last?.first,
            let landed = uncertain[String(decoding: receipt.value, as: UTF8.self)]
          {
            observe(result.revision, keyValue)
            return continuation.resume(returning: landed)
          }
          publish(observe(result.revision, keyValue))
          current = (keyValue?.modRevision ?? 0, keyValue?.value)
          if attempt > 4 {
            // Many writers on one key: spread the retries out a little.
            try? await Task.sleep(
              for: Self.contentionBackoff.delay(afterFailures: attempt - 4) ?? .zero)
          }
        } catch {
          guard error.isTransient, ContinuousClock.now < deadline else {
            // An attempt that may still land must not be reported as a plain failure: a caller
            // retrying on `unavailable` would apply the change twice.
            if error.isTransient, !uncertain.isEmpty {
              return continuation.resume(
                throwing: EtcdError.outcomeUnknown(
                  reason: "the update was sent while etcd was failing (\(error)) and may still be "
                    + "applied; read the value once etcd is reachable before trying again"))
            }
            return continuation.resume(throwing: error)
          }
          current = nil
          try? await Task.sleep(for: Self.updateBackoff.delay(afterFailures: attempt) ?? .zero)
        }
      }
    }
  }

  // MARK: Lease

  /// The lease new writes attach to, granted on first use and renewed while the store lives.
  private func currentLease() async throws(EtcdError) -> Int64? {
    guard let leaseTTL else { return nil }
    if let lease = state.withLock({ $0.leaseID }) { return lease }
    var lost = 0
    while true {
      do throws(EtcdError) {
        let lease = try await cluster.grantLease(ttl: leaseTTL)
        let renewal = Task { [weak self] () -> Void in
          await self?.keepAlive(lease, ttl: leaseTTL)
        }
        let previous = state.withLock { state in
          defer {
            state.leaseID = lease
            state.keepAlive = renewal
          }
          return state.keepAlive
        }
        previous?.cancel()
        return lease
      } catch {
        // A grant whose answer was lost only leaves an unused lease behind, which expires.
        guard case .outcomeUnknown = error, lost < 3 else { throw error }
        lost += 1
      }
    }
  }

  private func keepAlive(_ lease: Int64, ttl: Int64) async {
    let period = Duration.milliseconds(max(300, ttl * 1000 / 3))
    while !Task.isCancelled {
      try? await Task.sleep(for: period)
      guard !Task.isCancelled else { return }
      do throws(EtcdError) {
        if try await cluster.keepAlive(lease: lease) == 0 {
          // Expired (the gateway answers without a TTL): the next save grants a new one.
          state.withLock { if $0.leaseID == lease { $0.leaseID = nil } }
          return
        }
      } catch {
        continue
      }
    }
  }
}
