import Foundation
import Tether

/// A custom strategy: each value lives in its own small text file in a directory.
///
/// `@Shared(.textFile("count", in: directory)) var count = 0` keeps `count` in
/// `directory/count` as text (`"42"`). Any `LosslessStringConvertible` value works: `Int`,
/// `Double`, `Bool`, `String`. Another program that edits the file is noticed by polling.
struct TextFileKey<Value: LosslessStringConvertible & Sendable>: SharedKey {
  /// The file that holds the value.
  let url: URL
  /// How often `subscribe` looks at the file for changes made by others.
  let pollInterval: Duration

  /// Two keys for the same file share one value, whatever their poll interval.
  var id: String { url.standardizedFileURL.path }

  /// Reads the file: missing means "nothing stored yet" (the declared default is used), text
  /// that does not parse as `Value` is an error (the holder keeps its value, sets `loadError`).
  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    continuation.resume(with: Result { try readValue() })
  }

  /// Polls the file from a task and reports what changed: a new value, a deletion, or
  /// unreadable text. A `Task` is `Sendable`, so the subscription's cancel closure can hold it
  /// (a `DispatchSourceTimer` is not, and would need `@unchecked Sendable`).
  func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    let key = self
    let poller = Task {
      var lastText = try? key.readText()
      while !Task.isCancelled {
        try? await Task.sleep(for: key.pollInterval)
        let text = try? key.readText()
        guard text != lastText else { continue }
        lastText = text
        guard let text else {
          subscriber.yieldReturningInitialValue()
          continue
        }
        if let value = Value(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
          subscriber.yield(value)
        } else {
          subscriber.yield(throwing: TextFileKeyError.unreadable(path: key.url.path, text: text))
        }
      }
    }
    return SharedSubscription { poller.cancel() }
  }

  /// Writes the value atomically (a temporary file, then a rename), creating the directory.
  func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    continuation.resume(
      with: Result {
        try FileManager.default.createDirectory(
          at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(value.description.utf8).write(to: url, options: .atomic)
      })
  }

  private func readText() throws -> String? {
    guard FileManager.default.fileExists(atPath: url.path) else { return nil }
    return try String(contentsOf: url, encoding: .utf8)
  }

  private func readValue() throws -> Value? {
    guard let text = try readText() else { return nil }
    guard let value = Value(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
      throw TextFileKeyError.unreadable(path: url.path, text: text)
    }
    return value
  }
}

/// What goes wrong reading a text file value.
enum TextFileKeyError: Error, Equatable {
  /// The file's text is not a valid value of the key's type.
  case unreadable(path: String, text: String)
}

extension SharedReaderKey {
  /// A value kept as text in the file `name` inside `directory`.
  ///
  /// ```swift
  /// @Shared(.textFile("count", in: directory)) var count = 0
  /// ```
  static func textFile<Value>(
    _ name: String, in directory: URL, pollInterval: Duration = .milliseconds(100)
  ) -> Self where Self == TextFileKey<Value> {
    TextFileKey(url: directory.appendingPathComponent(name), pollInterval: pollInterval)
  }
}
