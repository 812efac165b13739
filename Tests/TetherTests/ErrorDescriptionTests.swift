import Foundation
import TestSupport
import Testing
import Tether

/// Tether's errors read well in `localizedDescription`, name what failed, and compare equal.
@Suite struct ErrorDescriptionTests {
  @Test func aFileThatFailsToDecodeNamesItsPathInLocalizedDescription() throws {
    try withTemporaryDirectory { directory in
      let url = directory.file("settings.json")
      try Data("{ not json".utf8).write(to: url)
      // Tether's real-file tests opt into the disk; tests keep files in memory by default.
      let settings = withSharedStorage(.isolated(files: .real)) {
        Shared(wrappedValue: 0, .fileStorage(url))
      }
      let error = try #require(settings.loadError as? FileStorageKeyError)
      #expect(error.localizedDescription == error.description)
      #expect(error.localizedDescription.contains(url.path))
      #expect(!error.localizedDescription.contains("The operation could not be completed"))
      #expect(error == error)
      #expect(error != FileStorageKeyError.readFailed(url: url, errno: EACCES))
    }
  }

  @Test func notFoundNamesTheKey() async throws {
    _ = await withSharedStorage(.isolated) {
      await #expect(throws: SharedLoadError.notFound(key: #".inMemory("absent")"#)) {
        _ = try await Shared<Int>(require: .inMemory("absent"))
      }
    }
    let error: any Error = SharedLoadError.notFound(key: #".inMemory("absent")"#)
    #expect(error.localizedDescription == #"nothing is stored for .inMemory("absent")"#)
  }
}
