import Foundation
import TestSupport

extension TemporaryDirectory {
  /// Writes `text` atomically (a temporary file, then a rename), as a deploy tool would.
  func write(_ text: String, to name: String) throws {
    try Data(text.utf8).write(to: file(name), options: .atomic)
  }
}
