import Foundation
import Synchronization
import TestSupport
import Testing
import TetherTesting

@testable import Tether

/// The file strategy's hardening rules (ARCHITECTURE.md, "Invariants each layer keeps", issue #9) through
/// `@Shared(.fileStorage(…))`, on real files: permissions, special files, the size cap,
/// symbolic links, the watch fallback, per-path bookkeeping, and sorted JSON keys.
@Suite(.isolatedSharedState(files: .real)) struct FileHardeningTests {
  let directory: TemporaryDirectory

  init() throws { directory = try TemporaryDirectory(prefix: "tether-hardening") }

  // MARK: Permissions

  @Test func anExistingFileKeepsItsModeWhenSaved() async throws {
    let url = directory.file("settings.json")
    try Data("1".utf8).write(to: url)
    #expect(chmod(url.path, 0o640) == 0)
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url)) var value = 0
      $value.withLock { $0 = 2 }
      try await $value.save()
    }
    let after = try #require(FileSystem.stat(url.path))
    #expect(after.mode & 0o7777 == 0o640)
    #expect(decodeFile(url, as: Int.self) == 2)
  }

  // MARK: Special files and the size cap

  /// Declares a holder on a thread of its own, so a read that blocks fails the test at the
  /// deadline instead of hanging it.
  func declareHolder(_ url: URL) async throws -> (value: Int, loadError: (any Error)?) {
    try await withTimeout(.seconds(10), "declaring a holder of \(url.path)") {
      await onDedicatedThread {
        withSharedStorage(.isolated(files: .real)) {
          @Shared(.fileStorage(url)) var value = 5
          return (value, $value.loadError)
        }
      }
    }
  }

  func expectNotARegularFile(_ error: (any Error)?, kind: String) {
    guard case FileStorageKeyError.notARegularFile(_, let found)? = error else {
      Issue.record("expected notARegularFile(\(kind)), got \(String(describing: error))")
      return
    }
    #expect(found == kind)
  }

  @Test func aFIFOAtThePathIsAnErrorAtOnceNeverAHang() async throws {
    let url = directory.file("fifo.json")
    #expect(mkfifo(url.path, 0o644) == 0)
    let (value, loadError) = try await declareHolder(url)
    #expect(value == 5)
    expectNotARegularFile(loadError, kind: "a FIFO")
    await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url)) var value = 5
      $value.withLock { $0 = 6 }
      await #expect(throws: FileStorageKeyError.self) { try await $value.save() }
    }
    var raw = stat()
    #expect(lstat(url.path, &raw) == 0 && raw.st_mode & S_IFMT == S_IFIFO, "the FIFO is kept")
  }

  @Test func aDirectoryAtThePathIsAnError() async throws {
    let url = try directory.subdirectory("folder.json")
    let (_, loadError) = try await declareHolder(url)
    expectNotARegularFile(loadError, kind: "a directory")
  }

  @Test func aSocketAtThePathIsAnError() async throws {
    let url = directory.file("socket.json")
    let socketDescriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    #expect(socketDescriptor >= 0)
    defer { close(socketDescriptor) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      let bytes = Array(url.path.utf8.prefix(buffer.count - 1))
      buffer.copyBytes(from: bytes)
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    #expect(bound == 0)
    let (_, loadError) = try await declareHolder(url)
    expectNotARegularFile(loadError, kind: "a socket")
  }

  @Test func aSymbolicLinkToDevZeroIsAnErrorNotAnEndlessRead() async throws {
    let url = directory.file("zero.json")
    try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "/dev/zero")
    let (value, loadError) = try await declareHolder(url)
    #expect(value == 5)
    expectNotARegularFile(loadError, kind: "a character device")
  }

  @Test func aFileAboveTheSizeCapIsAnErrorAndStaysInPlace() async throws {
    let url = directory.file("big.json")
    let bytes = Data("[\(Array(repeating: "1", count: 1_000).joined(separator: ","))]".utf8)
    try bytes.write(to: url)
    withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url, maximumFileSize: 1_024)) var numbers: [Int] = []
      #expect(numbers.isEmpty)
      guard case FileStorageKeyError.fileTooLarge(_, let size, let limit)? = $numbers.loadError
      else {
        Issue.record("expected fileTooLarge, got \(String(describing: $numbers.loadError))")
        return
      }
      #expect(size == bytes.count && limit == 1_024)
    }
    #expect(try Data(contentsOf: url) == bytes)
    #expect(try directory.contents() == ["big.json"])
    #expect(FileStorageKey<Int>.defaultMaximumFileSize == 64 * 1024 * 1024)
  }

  // MARK: Symbolic links

  @Test func aSymbolicLinkAtThePathIsFollowedAndStaysALink() async throws {
    let realDirectory = try directory.subdirectory("real")
    let target = realDirectory.appendingPathComponent("settings.json")
    try Data("1".utf8).write(to: target)
    #expect(chmod(target.path, 0o600) == 0)
    let link = directory.file("settings.json")
    try FileManager.default.createSymbolicLink(
      atPath: link.path, withDestinationPath: "real/settings.json")
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(link)) var value = 0
      #expect(value == 1)
      $value.withLock { $0 = 2 }
      try await $value.save()
      #expect(decodeFile(target, as: Int.self) == 2)
      #expect(FileSystem.stat(target.path).map { $0.mode & 0o7777 } == 0o600)
      // A change written through the target's directory reaches the holder.
      let seen = EventLog<Int>()
      let cancellable = $value.publisher.sink { seen.append($0) }
      defer { cancellable.cancel() }
      try Data("3".utf8).write(to: target, options: .atomic)
      #expect(await seen.wait(for: { $0 == 3 }))
    }
    var raw = stat()
    #expect(lstat(link.path, &raw) == 0 && raw.st_mode & S_IFMT == S_IFLNK, "still a link")
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: link.path)
        == "real/settings.json")
    #expect(try directory.contents() == ["real", "settings.json"])
  }

  // MARK: Watch fallback

  // The kernel's inotify watch limit cannot be reached on demand without starving every
  // other test of watches, so the refusal (ENOSPC) is injected for this directory only.
  @Test func aRefusedWatchFallsBackToCheckingAndIsReportedOnce_injectedFault() async throws {
    let url = directory.file("value.json")
    try Data("1".utf8).write(to: url)
    InotifyFaultInjection.refuseWatches(under: directory.path, errno: ENOSPC)
    defer { InotifyFaultInjection.stopRefusingWatches(under: directory.path) }
    let key: FileStorageKey<Int> = .fileStorage(url)
    let log = EventLog<KeyEvent<Int>>()
    let subscription = key.subscribe(into: log)
    defer { subscription.cancel() }
    #expect(
      await log.wait(for: {
        if case .failure(let message) = $0 { return message.contains("checking it every") }
        return false
      }))
    try Data("2".utf8).write(to: url, options: .atomic)
    #expect(await log.wait(for: { $0 == .value(2) }))
    try writeInPlace("3", to: url)
    #expect(await log.wait(for: { $0 == .value(3) }))
    let reports = log.events.filter { if case .failure = $0 { true } else { false } }
    #expect(reports.count == 1, "\(log.events)")

    // Through a holder: the report is its loadError, and changes still arrive.
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(directory.file("other.json"))) var other = 0
      try await waitUntil("the fallback is reported") {
        if case FileStorageKeyError.watchUnavailable(_, let code, let period)? = $other.loadError {
          return code == ENOSPC && period == .seconds(1)
        }
        return false
      }
      try Data("4".utf8).write(to: directory.file("other.json"), options: .atomic)
      try await waitUntil("the change arrives by checking") { other == 4 }
    }
  }

  // MARK: Bookkeeping per path

  @Test func pathsNoHolderUsesAreForgottenAndADirectoryIsScannedOnce() async throws {
    let populated = try directory.subdirectory("many")
    for index in 0..<200 {
      try Data("\(index)".utf8).write(to: populated.appendingPathComponent("existing-\(index)"))
    }
    var paths: [String] = []
    for index in 0..<300 {
      let url = populated.appendingPathComponent("key-\(index).json")
      paths.append(url.path)
      withSharedStorage(.isolated(files: .real)) {
        @Shared(.fileStorage(url)) var value = index
        #expect(value == index)
      }
    }
    try await waitUntil("every released path is forgotten") {
      paths.allSatisfy { !FileStorageRegistry.isRegistered($0) }
    }
    #expect(FileStorageRegistry.scanCount(of: populated.path) == 1)
  }

  // MARK: JSON

  @Test func jsonFilesAreWrittenWithSortedKeys() async throws {
    struct Settings: Codable, Sendable, Equatable {
      var zeta = 1
      var alpha = "a"
      var middle = [3: true]
      var nested = Nested()
    }
    struct Nested: Codable, Sendable, Equatable {
      var yellow = 1
      var blue = 2
    }
    let url = directory.file("settings.json")
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url)) var settings = Settings()
      $settings.withLock { $0.zeta = 2 }
      try await $settings.save()
    }
    let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
    #expect(text == #"{"alpha":"a","middle":{"3":true},"nested":{"blue":2,"yellow":1},"zeta":2}"#)
  }
}
