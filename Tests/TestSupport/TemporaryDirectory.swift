import Foundation

/// A fresh, empty directory for one test, removed with everything in it when the value is
/// released (or on `remove()`).
///
/// ```swift
/// let directory = try TemporaryDirectory()
/// let settings = directory.file("settings.json")   // inside it, not created
/// ```
///
/// The URL has symbolic links resolved (on macOS `/var` is `/private/var`), so it compares equal
/// to the paths that file-system events report. Keep the value alive for as long as the test
/// uses the directory.
public final class TemporaryDirectory: Sendable {
  /// The directory's URL.
  public let url: URL

  /// Creates a uniquely named directory inside the system's temporary directory.
  ///
  /// - Parameter prefix: The start of the directory's name, to recognise leftovers.
  /// - Throws: The file-system error when the directory cannot be created.
  public init(prefix: String = "tether-test") throws {
    let base = FileManager.default.temporaryDirectory
    let name = "\(prefix)-\(UUID().uuidString)"
    let url = base.appendingPathComponent(name, isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    self.url = url.resolvingSymlinksInPath()
  }

  deinit {
    remove()
  }

  /// The directory's path.
  public var path: String { url.path }

  /// The URL of `name` inside the directory; `name` may contain `/` for subdirectories.
  ///
  /// Nothing is created.
  public func file(_ name: String) -> URL {
    url.appendingPathComponent(name, isDirectory: false)
  }

  /// The URL of the subdirectory `name`, created if it does not exist.
  public func subdirectory(_ name: String) throws -> URL {
    let subdirectory = url.appendingPathComponent(name, isDirectory: true)
    try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: true)
    return subdirectory
  }

  /// The names of the entries in the directory, sorted (hidden files included).
  public func contents() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
  }

  /// Removes the directory and its contents now; safe to call more than once.
  public func remove() {
    try? FileManager.default.removeItem(at: url)
  }
}

/// Runs `body` with a fresh temporary directory that is removed when `body` returns or throws.
///
/// ```swift
/// try await withTemporaryDirectory { directory in
///   try Data("{}".utf8).write(to: directory.file("a.json"))
/// }
/// ```
public func withTemporaryDirectory<Result>(
  prefix: String = "tether-test",
  _ body: (TemporaryDirectory) async throws -> Result
) async throws -> Result {
  let directory = try TemporaryDirectory(prefix: prefix)
  defer { directory.remove() }
  return try await body(directory)
}

/// Runs `body` with a fresh temporary directory that is removed when `body` returns or throws
/// (the synchronous twin of the async form).
public func withTemporaryDirectory<Result>(
  prefix: String = "tether-test",
  _ body: (TemporaryDirectory) throws -> Result
) throws -> Result {
  let directory = try TemporaryDirectory(prefix: prefix)
  defer { directory.remove() }
  return try body(directory)
}
