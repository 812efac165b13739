import Foundation
import TestSupport
import Testing

@Suite struct TemporaryDirectoryTests {
  @Test func createsAnEmptyDirectoryAndRemovesItOnRelease() throws {
    var directory: TemporaryDirectory? = try TemporaryDirectory()
    let url = try #require(directory?.url)
    #expect(try directory?.contents() == [])
    try Data("{}".utf8).write(to: try #require(directory?.file("a.json")))
    _ = try directory?.subdirectory("sub/deeper")
    #expect(FileManager.default.fileExists(atPath: url.appendingPathComponent("a.json").path))

    directory = nil

    #expect(!FileManager.default.fileExists(atPath: url.path))
  }

  @Test func fileNamesAPathInsideWithoutCreatingIt() throws {
    let directory = try TemporaryDirectory()
    let file = directory.file("settings.json")
    #expect(file.deletingLastPathComponent().path == directory.path)
    #expect(!FileManager.default.fileExists(atPath: file.path))
  }

  @Test func directoriesAreDistinct() throws {
    let first = try TemporaryDirectory()
    let second = try TemporaryDirectory()
    #expect(first.url != second.url)
  }

  @Test func withTemporaryDirectoryRemovesItAfterTheBodyAndAfterAThrow() async throws {
    struct Boom: Error { let url: URL }
    let url = try await withTemporaryDirectory { directory in
      try Data("x".utf8).write(to: directory.file("x"))
      await Task.yield()
      return directory.url
    }
    #expect(!FileManager.default.fileExists(atPath: url.path))

    let error = await #expect(throws: Boom.self) {
      try await withTemporaryDirectory { directory in
        await Task.yield()
        throw Boom(url: directory.url)
      }
    }
    let thrownURL = try #require(error?.url)
    #expect(!FileManager.default.fileExists(atPath: thrownURL.path))
  }

  @Test func removeIsIdempotent() throws {
    let directory = try TemporaryDirectory()
    directory.remove()
    directory.remove()
    #expect(!FileManager.default.fileExists(atPath: directory.path))
  }
}
