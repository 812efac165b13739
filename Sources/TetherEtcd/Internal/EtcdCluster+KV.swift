import Foundation
import TetherSupport

/// The internal client: one method per gateway call the keys use.
extension EtcdCluster {
  /// A linearizable read of `key` (or of `key..<rangeEnd`).
  func range(
    _ key: Data, rangeEnd: Data? = nil, endpoint: Int? = nil, countOnly: Bool = false,
    timeout: Duration? = nil
  ) async throws(EtcdError) -> EtcdRange {
    var body: EtcdWire.Object = ["key": EtcdWire.base64(key)]
    if let rangeEnd { body["range_end"] = EtcdWire.base64(rangeEnd) }
    if countOnly { body["count_only"] = true }
    return try EtcdRange(
      decoding: try await call(
        "v3/kv/range", EtcdWire.data(body), idempotent: true, endpoint: endpoint,
        timeout: timeout))
  }

  /// Writes `value` at `key` unconditionally; returns the new revision.
  func put(
    _ key: Data, _ value: Data, lease: Int64? = nil, timeout: Duration? = nil
  ) async throws(EtcdError) -> Int64 {
    var body: EtcdWire.Object = ["key": EtcdWire.base64(key), "value": EtcdWire.base64(value)]
    if let lease { body["lease"] = EtcdWire.number(lease) }
    return EtcdWire.revision(
      try EtcdWire.object(
        try await call("v3/kv/put", EtcdWire.data(body), idempotent: false, timeout: timeout)))
  }

  /// Deletes `key`; returns the new revision.
  func delete(_ key: Data) async throws(EtcdError) -> Int64 {
    let body: EtcdWire.Object = ["key": EtcdWire.base64(key)]
    return EtcdWire.revision(
      try EtcdWire.object(
        try await call("v3/kv/deleterange", EtcdWire.data(body), idempotent: false)))
  }

  /// A transaction (`readOnly` when it only reads, so it may be repeated). `compare`, `success` and `failure` are in the gateway's JSON form (see
  /// ``EtcdTxn``).
  func txn(
    compare: [EtcdWire.Object], success: [EtcdWire.Object], failure: [EtcdWire.Object],
    readOnly: Bool = false, timeout: Duration? = nil
  ) async throws(EtcdError) -> EtcdTxnResult {
    let body = EtcdWire.data([
      "compare": .array(compare.map(JSONValue.object)),
      "success": .array(success.map(JSONValue.object)),
      "failure": .array(failure.map(JSONValue.object)),
    ])
    return try EtcdTxnResult(
      decoding: try await call("v3/kv/txn", body, idempotent: readOnly, timeout: timeout))
  }

  /// Grants a lease of `ttl` seconds; returns its id.
  func grantLease(ttl: Int64) async throws(EtcdError) -> Int64 {
    let object = try EtcdWire.object(
      try await call(
        "v3/lease/grant", EtcdWire.data(["TTL": EtcdWire.number(ttl)]), idempotent: false))
    let id = EtcdWire.int64(object, "id")
    guard id != 0 else { throw .invalidResponse("lease grant returned no ID") }
    return id
  }

  /// Renews lease `id` once; returns its remaining TTL, 0 when it has expired (the gateway
  /// then answers 200 without a TTL).
  func keepAlive(lease id: Int64) async throws(EtcdError) -> Int64 {
    let data = try await call(
      "v3/lease/keepalive", EtcdWire.data(["ID": EtcdWire.number(id)]), idempotent: true)
    // A streaming call: the first line holds the answer.
    let line = data.split(separator: 0x0A).first.map { Data($0) } ?? data
    let object = try EtcdWire.object(line)
    return EtcdWire.int64(EtcdWire.child(object, "result") ?? object, "ttl")
  }

  /// Revokes lease `id`: every key attached to it is deleted.
  func revokeLease(_ id: Int64) async throws(EtcdError) {
    _ = try await call(
      "v3/lease/revoke", EtcdWire.data(["ID": EtcdWire.number(id)]), idempotent: true)
  }
}

/// Builders for transaction operations in the gateway's JSON form.
enum EtcdTxn {
  /// `mod_revision(key) == revision` (0 matches a missing key).
  static func modRevisionEquals(_ key: Data, _ revision: Int64) -> EtcdWire.Object {
    [
      "key": EtcdWire.base64(key), "target": "MOD", "result": "EQUAL",
      "mod_revision": EtcdWire.number(revision),
    ]
  }

  static func put(_ key: Data, _ value: Data, lease: Int64? = nil) -> EtcdWire.Object {
    var put: EtcdWire.Object = ["key": EtcdWire.base64(key), "value": EtcdWire.base64(value)]
    if let lease { put["lease"] = EtcdWire.number(lease) }
    return ["request_put": .object(put)]
  }

  static func range(_ key: Data) -> EtcdWire.Object {
    ["request_range": .object(["key": EtcdWire.base64(key)])]
  }

  static func delete(_ key: Data) -> EtcdWire.Object {
    ["request_delete_range": .object(["key": EtcdWire.base64(key)])]
  }
}
