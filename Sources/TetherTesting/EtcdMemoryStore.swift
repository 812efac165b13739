import Foundation
import TetherEtcd
import TetherHTTP
import TetherSupport

/// An etcd cluster in memory, answering the v3 JSON gateway's calls: what `.etcd` keys in an
/// isolated scope talk to instead of a network (``InMemoryEtcd`` is its face).
///
/// It is reached through the cluster's own ``HTTPClient`` (``HTTPExchangeHandler``), so the
/// key store, the shared watch stream and its state machine run exactly as on a real cluster;
/// only the bytes never leave the process. It keeps etcd's semantics where keys rely on them:
/// - one store revision, incremented once per write request (a transaction's writes share
///   one); each key's `create_revision`, `mod_revision` and `version`;
/// - transactions whose compares (`MOD`, `CREATE`, `VERSION`, `VALUE`) pick the branch;
/// - watches from any past revision (the whole history is kept: nothing is compacted), one
///   create request per stream, the events of one revision in one message;
/// - leases on a clock the test moves (``advance(by:)``): a lease not renewed within its TTL
///   of that clock expires, and its keys are deleted in one revision, as a revoke does.
///
/// Invariants: `revision` only grows; `history` holds every event in revision order; a key's
/// `lease` is in that lease's `keys`. Watch streams are fed under the lock, so every stream
/// sees events in revision order (a continuation's `yield` only buffers; it calls nobody).
final class EtcdMemoryStore: Sendable {
  private struct Lease {
    var ttl: Int64
    var expires: Duration
    var keys: Set<Data> = []
  }

  private struct Watch {
    var key: Data
    var rangeEnd: Data?
    var continuation: AsyncThrowingStream<Data, any Error>.Continuation
  }

  private struct State {
    var revision: Int64 = 1
    var keyValues: [Data: EtcdKeyValue] = [:]
    var history: [EtcdEvent] = []
    var leases: [Int64: Lease] = [:]
    var nextLease: Int64 = 0x7E57_0000
    var now: Duration = .zero
    var watches: [UInt64: Watch] = [:]
    var nextWatch: UInt64 = 0
  }
  private let state = Lock(State())
  /// The write faults a test injected (`EtcdMemoryStore+Faults`).
  let faults = Lock(EtcdMemoryFaults())

  init() {}

  // MARK: - What a test sees and does

  /// The store's current revision (1 when nothing was ever written).
  var revision: Int64 { state.withLock { $0.revision } }

  /// The bytes stored at `key`, or `nil`.
  func value(_ key: String) -> Data? {
    state.withLock { $0.keyValues[Data(key.utf8)]?.value }
  }

  /// Every stored key, sorted.
  var keys: [String] {
    state.withLock { state in
      state.keyValues.keys.sorted { $0.lexicographicallyPrecedes($1) }
        .map { String(decoding: $0, as: UTF8.self) }
    }
  }

  /// Writes `value` at `key` as another machine would; returns the new revision.
  @discardableResult
  func put(_ key: String, _ value: Data) -> Int64 {
    state.withLock { state in
      Self.write(&state, [.put(Data(key.utf8), value, lease: 0)])
      return state.revision
    }
  }

  /// Deletes `key` as another machine would; returns the store's revision after it.
  @discardableResult
  func delete(_ key: String) -> Int64 {
    state.withLock { state in
      Self.write(&state, [.delete(Data(key.utf8), rangeEnd: nil)])
      return state.revision
    }
  }

  /// Moves the lease clock on by `duration`: every lease not renewed within its TTL by then
  /// expires, and the keys attached to it are deleted (watchers see the deletions).
  func advance(by duration: Duration) {
    state.withLock { state in
      state.now += duration
      let expired = state.leases.filter { $0.value.expires <= state.now }.keys.sorted()
      for id in expired { Self.revoke(&state, id) }
    }
  }

  /// The number of leases alive.
  var leaseCount: Int { state.withLock { $0.leases.count } }

  // MARK: - The store's operations

  private enum Operation {
    case put(Data, Data, lease: Int64)
    case delete(Data, rangeEnd: Data?)
    case range(Data, rangeEnd: Data?)
  }

  private enum Outcome {
    case put
    case deleted(Int)
    case range([EtcdKeyValue])
  }

  /// Applies `operations` at one new revision (if any of them writes) and tells the watches.
  @discardableResult
  private static func write(_ state: inout State, _ operations: [Operation]) -> [Outcome] {
    let revision = state.revision + 1
    var events: [EtcdEvent] = []
    var outcomes: [Outcome] = []
    for operation in operations {
      switch operation {
      case .put(let key, let value, let lease):
        let old = state.keyValues[key]
        if let old, old.lease != 0 { state.leases[old.lease]?.keys.remove(key) }
        if lease != 0 { state.leases[lease]?.keys.insert(key) }
        let keyValue = EtcdKeyValue(
          key: key, value: value, createRevision: old?.createRevision ?? revision,
          modRevision: revision, version: (old?.version ?? 0) + 1, lease: lease)
        state.keyValues[key] = keyValue
        events.append(EtcdEvent(kind: .put, keyValue: keyValue))
        outcomes.append(.put)
      case .delete(let key, let rangeEnd):
        let doomed = matching(state, key, rangeEnd)
        for keyValue in doomed {
          state.keyValues[keyValue.key] = nil
          if keyValue.lease != 0 { state.leases[keyValue.lease]?.keys.remove(keyValue.key) }
          events.append(
            EtcdEvent(
              kind: .delete,
              keyValue: EtcdKeyValue(
                key: keyValue.key, value: Data(), createRevision: 0, modRevision: revision,
                version: 0, lease: 0)))
        }
        outcomes.append(.deleted(doomed.count))
      case .range(let key, let rangeEnd):
        outcomes.append(.range(matching(state, key, rangeEnd)))
      }
    }
    guard !events.isEmpty else { return outcomes }
    state.revision = revision
    state.history += events
    for watch in state.watches.values {
      let seen = events.filter { inRange($0.keyValue.key, watch.key, watch.rangeEnd) }
      if !seen.isEmpty { watch.continuation.yield(message(revision: revision, events: seen)) }
    }
    return outcomes
  }

  private static func revoke(_ state: inout State, _ id: Int64) {
    guard let lease = state.leases.removeValue(forKey: id) else { return }
    write(
      &state,
      lease.keys.sorted { $0.lexicographicallyPrecedes($1) }.map {
        .delete($0, rangeEnd: nil)
      })
  }

  private static func inRange(_ key: Data, _ start: Data, _ end: Data?) -> Bool {
    guard let end else { return key == start }
    // etcd: a range end of "\0" means every key from `start` on.
    if end == Data([0]) { return !key.lexicographicallyPrecedes(start) }
    return !key.lexicographicallyPrecedes(start) && key.lexicographicallyPrecedes(end)
  }

  private static func matching(_ state: State, _ key: Data, _ rangeEnd: Data?) -> [EtcdKeyValue] {
    if rangeEnd == nil { return state.keyValues[key].map { [$0] } ?? [] }
    return state.keyValues.values.filter { inRange($0.key, key, rangeEnd) }
      .sorted { $0.key.lexicographicallyPrecedes($1.key) }
  }

  // MARK: - The gateway's JSON

  private static func header(_ revision: Int64) -> JSONValue {
    .object(["revision": EtcdWire.number(revision)])
  }

  private static func json(_ keyValue: EtcdKeyValue) -> JSONValue {
    .object([
      "key": EtcdWire.base64(keyValue.key), "value": EtcdWire.base64(keyValue.value),
      "create_revision": EtcdWire.number(keyValue.createRevision),
      "mod_revision": EtcdWire.number(keyValue.modRevision),
      "version": EtcdWire.number(keyValue.version), "lease": EtcdWire.number(keyValue.lease),
    ])
  }

  private static func message(revision: Int64, events: [EtcdEvent]) -> Data {
    let events = events.map { event -> JSONValue in
      .object(["type": .string(event.kind == .put ? "PUT" : "DELETE"), "kv": json(event.keyValue)])
    }
    return line(["result": .object(["header": header(revision), "events": .array(events)])])
  }

  private static func line(_ object: EtcdWire.Object) -> Data {
    var data = EtcdWire.data(object)
    data.append(0x0A)
    return data
  }

  private static func rangeEnd(_ object: EtcdWire.Object) -> Data? {
    EtcdWire.has(object, "range_end") ? EtcdWire.bytes(object, "range_end") : nil
  }

  private static func operation(_ object: EtcdWire.Object) -> Operation? {
    if let put = EtcdWire.child(object, "request_put") {
      return .put(
        EtcdWire.bytes(put, "key"), EtcdWire.bytes(put, "value"),
        lease: EtcdWire.int64(put, "lease"))
    }
    if let range = EtcdWire.child(object, "request_range") {
      return .range(EtcdWire.bytes(range, "key"), rangeEnd: rangeEnd(range))
    }
    if let delete = EtcdWire.child(object, "request_delete_range") {
      return .delete(EtcdWire.bytes(delete, "key"), rangeEnd: rangeEnd(delete))
    }
    return nil
  }

  private static func holds(_ state: State, _ compare: EtcdWire.Object) -> Bool {
    let current = state.keyValues[EtcdWire.bytes(compare, "key")]
    let target = EtcdWire.string(compare, "target") ?? "VERSION"
    let order: ComparisonResult
    switch target {
    case "VALUE":
      let expected = EtcdWire.bytes(compare, "value")
      let stored = current?.value ?? Data()
      order =
        stored == expected
        ? .orderedSame
        : stored.lexicographicallyPrecedes(expected) ? .orderedAscending : .orderedDescending
    default:
      let (have, want): (Int64, Int64) =
        switch target {
        case "MOD": (current?.modRevision ?? 0, EtcdWire.int64(compare, "mod_revision"))
        case "CREATE": (current?.createRevision ?? 0, EtcdWire.int64(compare, "create_revision"))
        case "LEASE": (current?.lease ?? 0, EtcdWire.int64(compare, "lease"))
        default: (current?.version ?? 0, EtcdWire.int64(compare, "version"))
        }
      order = have == want ? .orderedSame : have < want ? .orderedAscending : .orderedDescending
    }
    switch EtcdWire.string(compare, "result") ?? "EQUAL" {
    case "NOT_EQUAL": return order != .orderedSame
    case "GREATER": return order == .orderedDescending
    case "LESS": return order == .orderedAscending
    default: return order == .orderedSame
    }
  }

  static func failure(_ status: Int, code: Int, _ message: String) -> HTTPResponseMessage {
    HTTPResponseMessage(
      status: status, headers: ["content-type": "application/json"],
      body: EtcdWire.data([
        "error": .string(message), "message": .string(message), "code": .int(code),
      ]))
  }

  /// One unary gateway call.
  func answer(_ path: String, _ body: EtcdWire.Object) -> HTTPResponseMessage {
    state.withLock { state -> HTTPResponseMessage in
      var reply: EtcdWire.Object
      switch path {
      case "/v3/kv/range":
        let found = Self.matching(state, EtcdWire.bytes(body, "key"), Self.rangeEnd(body))
        reply = ["count": EtcdWire.number(Int64(found.count))]
        if !EtcdWire.bool(body, "count_only") { reply["kvs"] = .array(found.map(Self.json)) }
      case "/v3/kv/put", "/v3/kv/txn":
        let puts =
          path == "/v3/kv/put"
          ? [
            Operation.put(
              EtcdWire.bytes(body, "key"), EtcdWire.bytes(body, "value"),
              lease: EtcdWire.int64(body, "lease"))
          ] : []
        let succeeded = EtcdWire.objects(body, "compare").allSatisfy { Self.holds(state, $0) }
        let operations =
          path == "/v3/kv/put"
          ? puts
          : EtcdWire.objects(body, succeeded ? "success" : "failure").compactMap(Self.operation)
        for case .put(_, _, let lease) in operations where lease != 0 && state.leases[lease] == nil
        {
          return Self.failure(400, code: 5, "etcdserver: requested lease not found")
        }
        let outcomes = Self.write(&state, operations)
        reply = [:]
        if path == "/v3/kv/txn" {
          if succeeded { reply["succeeded"] = true }
          reply["responses"] = .array(
            outcomes.map { outcome -> JSONValue in
              switch outcome {
              case .put: .object(["response_put": .object([:])])
              case .deleted(let count):
                .object(["response_delete_range": .object(["deleted": .string("\(count)")])])
              case .range(let found):
                .object(["response_range": .object(["kvs": .array(found.map(Self.json))])])
              }
            })
        }
      case "/v3/kv/deleterange":
        let outcomes = Self.write(
          &state, [.delete(EtcdWire.bytes(body, "key"), rangeEnd: Self.rangeEnd(body))])
        if case .deleted(let count)? = outcomes.first {
          reply = ["deleted": .string("\(count)")]
        } else {
          reply = [:]
        }
      case "/v3/lease/grant":
        let ttl = max(1, EtcdWire.int64(body, "TTL"))
        state.nextLease += 1
        state.leases[state.nextLease] = Lease(ttl: ttl, expires: state.now + .seconds(ttl))
        reply = ["ID": EtcdWire.number(state.nextLease), "TTL": EtcdWire.number(ttl)]
      case "/v3/lease/keepalive":
        let id = EtcdWire.int64(body, "ID")
        var result: EtcdWire.Object = ["ID": EtcdWire.number(id)]
        if var lease = state.leases[id] {
          lease.expires = state.now + .seconds(lease.ttl)
          state.leases[id] = lease
          result["TTL"] = EtcdWire.number(lease.ttl)
        }
        // An expired lease is answered without a TTL, as the gateway does.
        return HTTPResponseMessage(
          status: 200,
          body: Self.line(["result": .object(result)]))
      case "/v3/lease/revoke":
        let id = EtcdWire.int64(body, "ID")
        guard state.leases[id] != nil else {
          return Self.failure(404, code: 5, "etcdserver: requested lease not found")
        }
        Self.revoke(&state, id)
        reply = [:]
      default:
        return Self.failure(404, code: 12, "the in-memory etcd does not serve \(path)")
      }
      reply["header"] = Self.header(state.revision)
      return HTTPResponseMessage(
        status: 200, headers: ["content-type": "application/json"], body: EtcdWire.data(reply))
    }
  }

  /// Opens a watch stream for the create request in `body`: its creation, the history from
  /// its start revision, then every later change in its range, until the reader goes away.
  func watch(_ body: Data) -> HTTPStreamingResponse {
    let first = body.split(separator: 0x0A).first.map { Data($0) } ?? body
    let create = (try? EtcdWire.object(first)).flatMap { EtcdWire.child($0, "create_request") }
    let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
    guard let create else {
      continuation.yield(
        Self.line(["error": .object(["message": .string("no create_request"), "code": .int(3)])]))
      continuation.finish()
      return HTTPStreamingResponse(status: 200, headers: [:], streaming: stream)
    }
    let key = EtcdWire.bytes(create, "key")
    let rangeEnd = Self.rangeEnd(create)
    let start = EtcdWire.int64(create, "start_revision")
    let id = state.withLock { state -> UInt64 in
      continuation.yield(
        Self.line([
          "result": .object(["header": Self.header(state.revision), "created": true])
        ]))
      if start > 0 {
        let past = state.history.filter {
          $0.keyValue.modRevision >= start && Self.inRange($0.keyValue.key, key, rangeEnd)
        }
        for (revision, events) in Dictionary(grouping: past, by: \.keyValue.modRevision).sorted(
          by: { $0.key < $1.key })
        {
          continuation.yield(Self.message(revision: revision, events: events))
        }
      }
      state.nextWatch += 1
      state.watches[state.nextWatch] = Watch(
        key: key, rangeEnd: rangeEnd, continuation: continuation)
      return state.nextWatch
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.watches.removeValue(forKey: id) }
    }
    return HTTPStreamingResponse(
      status: 200, headers: ["content-type": "application/json"], streaming: stream)
  }
}
