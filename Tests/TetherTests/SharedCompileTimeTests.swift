import Foundation
import TestSupport
import Testing

/// What must (and must not) compile for a user: checked by type-checking a snippet against the
/// `Tether` module this test run was built with, using the toolchain's `swiftc`.
// Heavy: each test runs the compiler for seconds; they take turns with the other heavy tests.
@Suite(.heavy) struct SharedCompileTimeTests {
  /// The directory of the built modules, next to the test bundle (`.build/debug/Modules`).
  static let modules: URL? = {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    let modules = executable.deletingLastPathComponent().appendingPathComponent("Modules")
    let module = modules.appendingPathComponent("Tether.swiftmodule").path
    return FileManager.default.fileExists(atPath: module) ? modules : nil
  }()

  /// The toolchain's `swiftc`, found on `PATH`.
  static let swiftc: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "")
    .split(separator: ":")
    .map { URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc") }
    .first { FileManager.default.isExecutableFile(atPath: $0.path) }

  /// Type-checks `source` (with `extraFiles`) against the built `Tether`, as a separate
  /// module would; returns whether it compiled and the compiler's diagnostics.
  ///
  /// The compiler runs for seconds; waiting for it happens on a thread of its own. Not on a
  /// Swift-concurrency thread, nor on `DispatchQueue.global()`: on Linux those are the same
  /// threads (two on a two-core machine), and blocking one stalls half of the parallel run.
  func typeCheck(
    _ source: String, with extraFiles: [URL] = []
  ) async throws -> (compiled: Bool, diagnostics: String) {
    let modules = try #require(Self.modules)
    let swiftc = try #require(Self.swiftc)
    return try await withTemporaryDirectory { directory in
      let file = directory.file("snippet.swift")
      try Data(source.utf8).write(to: file)
      let arguments =
        ["-typecheck", "-swift-version", "6", "-I", modules.path, file.path]
        + extraFiles.map(\.path)
      return try await onDedicatedThread { Result { try Self.run(swiftc, arguments) } }.get()
    }
  }

  /// Runs `executable` to its end on the calling (dedicated) thread.
  private static func run(
    _ executable: URL, _ arguments: [String]
  ) throws -> (compiled: Bool, diagnostics: String) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let diagnostics = String(
      decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus == 0, diagnostics)
  }

  @Test(.enabled(if: modules != nil && swiftc != nil))
  func assigningASharedValueFailsToCompileAndNamesWithLock() async throws {
    let (compiled, diagnostics) = try await typeCheck(
      """
      import Tether
      final class Model {
        @Shared(.inMemory("count")) var count = 0
      }
      func bump(_ model: Model) { model.count += 1 }
      """)
    #expect(!compiled)
    #expect(diagnostics.contains("withLock"))
  }

  @Test(.enabled(if: modules != nil && swiftc != nil))
  func inlineDefaultAndMutationThroughWithLockCompile() async throws {
    let (compiled, diagnostics) = try await typeCheck(
      """
      import Tether
      final class Model {
        @Shared(.inMemory("count")[default: 55]) var count: Int
        func bump() { $count.withLock { $0 += 1 } }
        var doubled: Int { count * 2 }
      }
      """)
    #expect(compiled, "\(diagnostics)")
  }

  @Test(.enabled(if: modules != nil && swiftc != nil))
  func portedSwiftSharingKeyAndModelCompileUnchangedInAnotherModule() async throws {
    // The ported key's file exactly as the tests use it, plus a model written the way
    // swift-sharing's documentation writes them, compiled as a user's module would be.
    let portedKey = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("Support/PortedKeyValueStoreKey.swift")
    let (compiled, diagnostics) = try await typeCheck(
      """
      import Observation
      import Tether

      @Observable
      final class CounterModel {
        @ObservationIgnored
        @Shared(.keyValue("count")) var count = 0
        var countReader: SharedReader<Int> { SharedReader($count) }

        func incrementButtonTapped() {
          $count.withLock { $0 += 1 }
        }

        func reload() async throws {
          try await $count.load()
          try await $count.load(.keyValue("other-count"))
        }
      }
      """, with: [portedKey])
    #expect(compiled, "\(diagnostics)")
  }
}
