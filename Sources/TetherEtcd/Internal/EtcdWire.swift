import Foundation
import TetherSupport

/// One key-value pair as etcd stores it.
package struct EtcdKeyValue: Sendable, Equatable {
  package var key: Data
  package var value: Data
  package var createRevision: Int64
  package var modRevision: Int64
  package var version: Int64
  package var lease: Int64

  package init(
    key: Data, value: Data, createRevision: Int64, modRevision: Int64, version: Int64,
    lease: Int64
  ) {
    (self.key, self.value, self.lease) = (key, value, lease)
    (self.createRevision, self.modRevision, self.version) = (createRevision, modRevision, version)
  }
}

/// One change a watch reports.
package struct EtcdEvent: Sendable, Equatable {
  package enum Kind: Sendable, Equatable {
    case put
    case delete
  }
  package var kind: Kind
  package var keyValue: EtcdKeyValue

  package init(kind: Kind, keyValue: EtcdKeyValue) {
    self.kind = kind
    self.keyValue = keyValue
  }
}

/// The answer to a range request.
struct EtcdRange: Sendable, Equatable {
  /// The store's revision when the range was read.
  var revision: Int64
  var keyValues: [EtcdKeyValue]

  /// Decodes the gateway's answer (`{"header": {"revision"}, "kvs": […]}`).
  init(decoding data: Data) throws(EtcdError) {
    let object = try EtcdWire.object(data)
    self.init(
      revision: EtcdWire.revision(object),
      keyValues: EtcdWire.objects(object, "kvs").map(EtcdWire.keyValue))
  }

  init(revision: Int64, keyValues: [EtcdKeyValue]) {
    self.revision = revision
    self.keyValues = keyValues
  }
}

/// The answer to a transaction.
struct EtcdTxnResult: Sendable, Equatable {
  var succeeded: Bool
  /// The store's revision after the transaction (the revision of its writes when it wrote).
  var revision: Int64
  /// The key-values of each range operation of the branch that ran, in order.
  var ranges: [[EtcdKeyValue]]

  /// Decodes the gateway's answer (a failed transaction has no `succeeded`).
  init(decoding data: Data) throws(EtcdError) {
    let object = try EtcdWire.object(data)
    let ranges = EtcdWire.objects(object, "responses").compactMap { response in
      EtcdWire.child(response, "response_range").map {
        EtcdWire.objects($0, "kvs").map(EtcdWire.keyValue)
      }
    }
    self.init(
      succeeded: EtcdWire.bool(object, "succeeded"), revision: EtcdWire.revision(object),
      ranges: ranges)
  }

  init(succeeded: Bool, revision: Int64, ranges: [[EtcdKeyValue]]) {
    self.succeeded = succeeded
    self.revision = revision
    self.ranges = ranges
  }
}

/// The JSON gateway's conventions, read and written in one place, on Tether's one JSON
/// parser and writer (`JSONValue`):
///
/// - keys and values are base64;
/// - 64-bit numbers are sent as strings (a lease id exceeds a `Double`'s exact range), but a
///   number is accepted too;
/// - field names come in several spellings (`mod_revision`, `modRevision`, `ID`, `TTL`);
/// - default values are omitted: a missing number is 0, a missing flag is `false`, a missing
///   event `type` is `PUT`.
package enum EtcdWire {
  package typealias Object = [String: JSONValue]

  /// Parses a JSON object, or fails with ``EtcdError/invalidResponse(_:)``.
  package static func object(_ data: Data) throws(EtcdError) -> Object {
    let parsed: JSONValue
    do {
      parsed = try JSONValue(parsing: data)
    } catch {
      throw .invalidResponse("not JSON (\(data.count) bytes)")
    }
    guard case .object(let object) = parsed else { throw .invalidResponse("not a JSON object") }
    return object
  }

  /// Encodes a request body.
  package static func data(_ object: Object) -> Data { JSONValue.object(object).jsonData() }

  /// The field `name` (snake_case) in any of the gateway's spellings.
  package static func field(_ object: Object, _ name: String) -> JSONValue? {
    if let value = object[name] { return value }
    let parts = name.split(separator: "_")
    let camel =
      (parts.first.map(String.init) ?? "")
      + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    return object[camel] ?? object[name.uppercased()]
  }

  /// A 64-bit integer sent as a string or a number; 0 when omitted or malformed.
  package static func int64(_ object: Object, _ name: String) -> Int64 {
    switch field(object, name) {
    case .string(let text): Int64(text) ?? 0
    case .int(let number): Int64(number)
    // A Double beyond Int64's range would trap in a plain conversion.
    case .double(let number): Int64(exactly: number.rounded()) ?? 0
    default: 0
    }
  }

  /// A string field; `nil` when omitted or not a string.
  package static func string(_ object: Object, _ name: String) -> String? {
    if case .string(let text) = field(object, name) { return text }
    return nil
  }

  /// Whether the field `name` is present at all.
  package static func has(_ object: Object, _ name: String) -> Bool { field(object, name) != nil }

  /// A flag; `false` when omitted.
  package static func bool(_ object: Object, _ name: String) -> Bool {
    switch field(object, name) {
    case .bool(let flag): flag
    case .string(let text): text == "true"
    default: false
    }
  }

  /// A base64 field; empty when omitted or malformed.
  package static func bytes(_ object: Object, _ name: String) -> Data {
    string(object, name).flatMap { Data(base64Encoded: $0) } ?? Data()
  }

  /// The objects of an array field (anything else in it is skipped); empty when omitted.
  package static func objects(_ object: Object, _ name: String) -> [Object] {
    guard case .array(let values) = field(object, name) else { return [] }
    return values.compactMap { value in
      if case .object(let object) = value { return object }
      return nil
    }
  }

  /// An object field; `nil` when omitted or not an object.
  package static func child(_ object: Object, _ name: String) -> Object? {
    if case .object(let child) = field(object, name) { return child }
    return nil
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
    let isDelete =
      switch field(object, "type") {
      case .string(let type): type == "DELETE"
      case .int(let type): type == 1
      default: false
      }
    return EtcdEvent(
      kind: isDelete ? .delete : .put, keyValue: keyValue(child(object, "kv") ?? [:]))
  }

  /// A key or value as the gateway wants it.
  package static func base64(_ bytes: Data) -> JSONValue { .string(bytes.base64EncodedString()) }
  package static func base64(_ key: String) -> JSONValue { base64(Data(key.utf8)) }

  /// A 64-bit number as the gateway wants it (a string).
  package static func number(_ value: Int64) -> JSONValue { .string(String(value)) }

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
  /// Which watch of the stream it is about: the position of its create request in the
  /// stream's body (etcd numbers them 0, 1, … per stream; 0 is omitted). -1 is the whole
  /// stream.
  var watchID: Int64 = 0
  var created = false
  var canceled = false
  var compactRevision: Int64 = 0
  var cancelReason = ""
  var events: [EtcdEvent] = []
  /// An error object the gateway sent instead of a result (`{"error": …}`).
  var error: String?
  /// A message longer than the decoder's limit stood here, unread: its events are lost.
  var oversized = false

  /// A message that only says "everything up to `revision` was sent".
  var isProgress: Bool { !created && !canceled && !oversized && events.isEmpty && error == nil }

  /// What ``EtcdWatchDecoder`` gives for a line longer than its limit.
  static var oversizedMarker: EtcdWatchMessage { EtcdWatchMessage(revision: 0, oversized: true) }
}

/// Splits a watch response body into messages. The gateway writes one JSON object per line
/// (`{"result": {…}}` or `{"error": {…}}`); chunks may end anywhere, and one message may hold
/// several events.
///
/// A line longer than `limit` is not kept: it becomes a message marked ``EtcdWatchMessage/oversized``
/// (its events are lost, so the watches re-read their keys), and its bytes are skipped up to
/// its end. The messages are the same however the stream is cut into chunks.
struct EtcdWatchDecoder {
  /// The longest line accepted, in bytes: a hostile or broken stream cannot grow memory
  /// without bound.
  let limit: Int
  private var buffer = Data()
  /// How many bytes at the start of `buffer` are known to hold no newline: each chunk's search
  /// starts after them, so a large message arriving in many chunks is scanned once, not once
  /// per chunk (a 1.4 MB value, about 1.9 MB of JSON, took tens of seconds to reach holders).
  private var scanned = 0
  /// Whether the rest of an over-long line is being skipped (up to its newline).
  private var skipping = false

  init(limit: Int) { self.limit = limit }

  /// Feeds `chunk` and returns every message completed by it.
  mutating func feed(_ chunk: Data) throws(EtcdError) -> [EtcdWatchMessage] {
    var chunk = chunk[...]
    if skipping {
      guard let newline = chunk.firstIndex(of: 0x0A) else { return [] }
      chunk = chunk[chunk.index(after: newline)...]
      skipping = false
    }
    buffer.append(contentsOf: chunk)
    var messages: [EtcdWatchMessage] = []
    var lineStart = buffer.startIndex
    var searchFrom = buffer.startIndex + scanned
    while let newline = buffer[searchFrom...].firstIndex(of: 0x0A) {
      let line = buffer[lineStart..<newline]
      lineStart = buffer.index(after: newline)
      searchFrom = lineStart
      if line.count > limit {
        messages.append(.oversizedMarker)
        continue
      }
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
      do {
        messages.append(try Self.message(Data(line)))
      } catch {
        // As before: the broken line is dropped with the lines before it.
        buffer = Data(buffer[lineStart...])
        scanned = 0
        throw error
      }
    }
    if lineStart != buffer.startIndex { buffer = Data(buffer[lineStart...]) }
    scanned = buffer.count
    if buffer.count > limit {
      // An unfinished line already over the limit: reported now, its rest skipped.
      scanned = 0
      buffer = Data()
      skipping = true
      messages.append(.oversizedMarker)
    }
    return messages
  }

  static func message(_ line: Data) throws(EtcdError) -> EtcdWatchMessage {
    let object = try EtcdWire.object(line)
    if let error = EtcdWire.field(object, "error") {
      let text =
        switch error {
        case .object(let details): EtcdWire.string(details, "message") ?? "watch error"
        case .string(let text): text
        default: "watch error"
        }
      return EtcdWatchMessage(revision: 0, error: text)
    }
    let result = EtcdWire.child(object, "result") ?? object
    return EtcdWatchMessage(
      revision: EtcdWire.revision(result), watchID: EtcdWire.int64(result, "watch_id"),
      created: EtcdWire.bool(result, "created"), canceled: EtcdWire.bool(result, "canceled"),
      compactRevision: EtcdWire.int64(result, "compact_revision"),
      cancelReason: EtcdWire.string(result, "cancel_reason") ?? "",
      events: EtcdWire.objects(result, "events").map(EtcdWire.event))
  }
}
