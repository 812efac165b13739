import Foundation

/// One key-value pair as etcd stores it.
struct EtcdKeyValue: Sendable, Equatable {
  var key: Data
  var value: Data
  var createRevision: Int64
  var modRevision: Int64
  var version: Int64
  var lease: Int64
}

/// One change a watch reports.
struct EtcdEvent: Sendable, Equatable {
  enum Kind: Sendable, Equatable {
    case put
    case delete
  }
  var kind: Kind
  var keyValue: EtcdKeyValue
}

/// The JSON gateway's conventions, read and written in one place:
///
/// - keys and values are base64;
/// - 64-bit numbers are sent as strings (a lease id exceeds a `Double`'s exact range), but a
///   number is accepted too;
/// - field names come in several spellings (`mod_revision`, `modRevision`, `ID`, `TTL`);
/// - default values are omitted: a missing number is 0, a missing flag is `false`, a missing
///   event `type` is `PUT`.
enum EtcdWire {
  typealias Object = [String: Any]

  /// Parses a JSON object, or fails with ``EtcdError/invalidResponse(_:)``.
  static func object(_ data: Data) throws(EtcdError) -> Object {
    let parsed: Any
    do {
      parsed = try JSONSerialization.jsonObject(with: data, options: [])
    } catch {
      throw .invalidResponse("not JSON (\(data.count) bytes)")
    }
    guard let object = parsed as? Object else { throw .invalidResponse("not a JSON object") }
    return object
  }

  /// Encodes a request body.
  static func data(_ object: Object) -> Data {
    // Only strings, booleans, arrays and objects go in: serialization cannot fail.
    (try? JSONSerialization.data(withJSONObject: object, options: [])) ?? Data("{}".utf8)
  }

  /// The field `name` (snake_case) in any of the gateway's spellings.
  static func field(_ object: Object, _ name: String) -> Any? {
    if let value = object[name] { return value }
    let parts = name.split(separator: "_")
    let camel =
      (parts.first.map(String.init) ?? "")
      + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    return object[camel] ?? object[name.uppercased()]
  }

  /// A 64-bit integer sent as a string or a number; 0 when omitted or malformed.
  static func int64(_ object: Object, _ name: String) -> Int64 {
    switch field(object, name) {
    case let text as String: Int64(text) ?? 0
    case let number as NSNumber:
      // A Double beyond Int64's range would trap in a plain conversion.
      Int64(exactly: number.doubleValue.rounded()) ?? 0
    default: 0
    }
  }

  /// Whether the 64-bit field `name` is present at all.
  static func has(_ object: Object, _ name: String) -> Bool { field(object, name) != nil }

  /// A flag; `false` when omitted.
  static func bool(_ object: Object, _ name: String) -> Bool {
    switch field(object, name) {
    case let flag as Bool: flag
    case let text as String: text == "true"
    default: false
    }
  }

  /// A base64 field; empty when omitted or malformed.
  static func bytes(_ object: Object, _ name: String) -> Data {
    (field(object, name) as? String).flatMap { Data(base64Encoded: $0) } ?? Data()
  }

  static func objects(_ object: Object, _ name: String) -> [Object] {
    field(object, name) as? [Object] ?? []
  }

  static func child(_ object: Object, _ name: String) -> Object? {
    field(object, name) as? Object
  }

  /// The `header.revision` of a response.
  static func revision(_ object: Object) -> Int64 {
    child(object, "header").map { int64($0, "revision") } ?? 0
  }

  static func keyValue(_ object: Object) -> EtcdKeyValue {
    EtcdKeyValue(
      key: bytes(object, "key"), value: bytes(object, "value"),
      createRevision: int64(object, "create_revision"), modRevision: int64(object, "mod_revision"),
      version: int64(object, "version"), lease: int64(object, "lease"))
  }

  static func event(_ object: Object) -> EtcdEvent {
    let type = field(object, "type")
    let isDelete = (type as? String) == "DELETE" || (type as? NSNumber)?.intValue == 1
    return EtcdEvent(
      kind: isDelete ? .delete : .put, keyValue: keyValue(child(object, "kv") ?? [:]))
  }

  /// A key or value as the gateway wants it.
  static func base64(_ bytes: Data) -> String { bytes.base64EncodedString() }
  static func base64(_ key: String) -> String { Data(key.utf8).base64EncodedString() }

  /// The end of the range of every key that starts with `prefix` (etcd's "prefix + 1").
  static func prefixEnd(_ prefix: Data) -> Data {
    var bytes = [UInt8](prefix)
    while let last = bytes.last {
      if last < 0xFF {
        bytes[bytes.count - 1] = last + 1
        return Data(bytes)
      }
      bytes.removeLast()
    }
    return Data([0])  // every key
  }
}

/// One message of a watch stream.
struct EtcdWatchMessage: Sendable, Equatable {
  var revision: Int64
  var created = false
  var canceled = false
  var compactRevision: Int64 = 0
  var cancelReason = ""
  var events: [EtcdEvent] = []
  /// An error object the gateway sent instead of a result (`{"error": …}`).
  var error: String?

  /// A message that only says "everything up to `revision` was sent".
  var isProgress: Bool { !created && !canceled && events.isEmpty && error == nil }
}

/// Splits a watch response body into messages. The gateway writes one JSON object per line
/// (`{"result": {…}}` or `{"error": {…}}`); chunks may end anywhere, and one message may hold
/// several events.
struct EtcdWatchDecoder {
  /// The longest line accepted, in bytes: a hostile or broken stream cannot grow memory
  /// without bound.
  let limit: Int
  private var buffer = Data()

  init(limit: Int) { self.limit = limit }

  /// Feeds `chunk` and returns every message completed by it.
  mutating func feed(_ chunk: Data) throws(EtcdError) -> [EtcdWatchMessage] {
    buffer.append(chunk)
    var messages: [EtcdWatchMessage] = []
    while let newline = buffer.firstIndex(of: 0x0A) {
      let line = buffer[buffer.startIndex..<newline]
      buffer = Data(buffer[buffer.index(after: newline)...])
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
      messages.append(try Self.message(Data(line)))
    }
    if buffer.count > limit {
      buffer = Data()
      throw .invalidResponse("a watch message is larger than \(limit) bytes")
    }
    return messages
  }

  static func message(_ line: Data) throws(EtcdError) -> EtcdWatchMessage {
    let object = try EtcdWire.object(line)
    if let error = EtcdWire.field(object, "error") {
      let text =
        (error as? EtcdWire.Object).flatMap { $0["message"] as? String }
        ?? (error as? String) ?? "watch error"
      return EtcdWatchMessage(revision: 0, error: text)
    }
    let result = EtcdWire.child(object, "result") ?? object
    return EtcdWatchMessage(
      revision: EtcdWire.revision(result), created: EtcdWire.bool(result, "created"),
      canceled: EtcdWire.bool(result, "canceled"),
      compactRevision: EtcdWire.int64(result, "compact_revision"),
      cancelReason: EtcdWire.field(result, "cancel_reason") as? String ?? "",
      events: EtcdWire.objects(result, "events").map(EtcdWire.event))
  }
}
