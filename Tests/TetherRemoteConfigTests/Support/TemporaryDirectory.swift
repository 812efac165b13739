import Foundation

/// A fresh directory under the system's temporary directory, removed on deinit.
final class TemporaryDirectory: Sendable {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("tether-remote-config-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> URL { url.appendingPathComponent(name) }

  /// Writes `text` atomically (a temporary file, then a rename), as a deploy tool would.
  func write(_ text: String, to name: String) throws {
    try Data(text.utf8).write(to: file(name), options: .atomic)
  }

  var contents: [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: url.path).sorted()) ?? []
  }

  deinit { try? FileManager.default.removeItem(at: url) }
}
