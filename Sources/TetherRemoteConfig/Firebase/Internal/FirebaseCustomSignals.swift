import Foundation

/// A ``FirebaseConfigSource``'s custom signals, as a value: Firebase's limits, the merge that
/// ``FirebaseConfigSource/setCustomSignals(_:)`` performs, the form the fetch body carries, and
/// whether a change still has to reach the server, as the Firebase SDKs treat them.
///
/// - A key has 1 to 250 characters; a value is a string of at most 500 characters or a finite
///   number; `.null` in a merge removes the signal; there are at most 100 signals.
/// - The body carries them as a map of strings (numbers as their decimal text), as every SDK
///   sends them: Firebase rejects other JSON types with 400.
/// - A change is pending from the merge until a fetch that carried it (or a later generation)
///   is answered, so that fetch ignores the ETag and the minimum fetch interval.
package struct FirebaseCustomSignals: Sendable, Equatable {
  /// The most signals Firebase accepts.
  package static let maximumCount = 100

  /// The signals, by key.
  package private(set) var values: [String: JSONValue]
  /// Counts the changes: a fetch body is built for one generation.
  package private(set) var generation = 0
  /// Whether the signals changed since the last fetch that reached the server.
  package private(set) var changePending = false

  /// The valid signals among `initial`; invalid ones are left out.
  package init(validAmong initial: [String: JSONValue]) {
    values = initial.filter { Self.problem(with: $0.value) == nil }
  }

  /// Checks each of `signals` against Firebase's limits, in key order.
  ///
  /// - Throws: ``FirebaseConfigSourceError/invalidCustomSignal(key:reason:)`` for the first
  ///   signal that breaks one.
  package static func validate(_ signals: [String: JSONValue]) throws(FirebaseConfigSourceError) {
    for (key, value) in signals.sorted(by: { $0.key < $1.key }) {
      if key.isEmpty || key.count > 250 {
        throw .invalidCustomSignal(key: key, reason: "a key has 1 to 250 characters")
      }
      if let problem = problem(with: value) {
        throw .invalidCustomSignal(key: key, reason: problem)
      }
    }
  }

  /// Merges `signals` (already validated) in: `.null` removes a signal. Returns whether the
  /// signals changed; a change starts a new generation and is pending.
  ///
  /// - Throws: ``FirebaseConfigSourceError/invalidCustomSignal(key:reason:)`` when the result
  ///   would hold more than 100 signals; the signals are unchanged then.
  package mutating func merge(
    _ signals: [String: JSONValue]
  ) throws(FirebaseConfigSourceError) -> Bool {
    var merged = values
    for (key, value) in signals {
      if value == .null { merged.removeValue(forKey: key) } else { merged[key] = value }
    }
    if merged.count > Self.maximumCount {
      throw .invalidCustomSignal(
        key: signals.keys.sorted().first ?? "", reason: "at most 100 signals")
    }
    guard merged != values else { return false }
    values = merged
    changePending = true
    generation += 1
    return true
  }

  /// Records that the server answered a fetch that carried `generation`: the change is no
  /// longer pending unless the signals changed again since.
  package mutating func reachedServer(generation sent: Int) {
    if sent == generation { changePending = false }
  }

  /// The `custom_signals` field of the fetch body: every value as a string.
  package var fetchField: JSONValue {
    .object(values.mapValues { .string(Self.text($0)) })
  }

  /// A signal as the SDKs send it: a string as is, a number as its decimal text.
  package static func text(_ value: JSONValue) -> String {
    switch value {
    case .string(let text): text
    case .int(let number): String(number)
    case .double(let number):
      number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    default: value.jsonText
    }
  }

  /// Why `value` cannot be a signal's value, or `nil` when it can (`.null` can: it removes).
  package static func problem(with value: JSONValue) -> String? {
    switch value {
    case .string(let text): text.count > 500 ? "a value has at most 500 characters" : nil
    case .int, .null: nil
    case .double(let number): number.isFinite ? nil : "a number must be finite"
    default: "a value is a string or a number (null removes the signal)"
    }
  }
}
