import Foundation
import TestSupport
import Testing

/// What must (and must not) compile for a user: checked by type-checking a snippet against the
/// `Tether` module this test run was built with, using the toolchain's `swiftc`.
@Suite struct SharedCompileTimeTests {
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

  /// Type-checks `source` against the built `Tether`; returns whether it compiled and the
  /// compiler's diagnostics.
  func typeCheck(_ source: String) throws -> (compiled: Bool, diagnostics: String) {
    let modules = try #require(Self.modules)
    let swiftc = try #require(Self.swiftc)
    return try withTemporaryDirectory { directory in
      let file = directory.file("snippet.swift")
      try Data(source.utf8).write(to: file)
      let process = Process()
      process.executableURL = swiftc
      process.arguments = [
        "-typecheck", "-swift-version", "6", "-I", modules.path, file.path,
      ]
      let errors = Pipe()
      process.standardError = errors
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      let diagnostics = String(
        decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      return (process.terminationStatus == 0, diagnostics)
    }
  }

  @Test(.enabled(if: modules != nil && swiftc != nil))
  func assigningASharedValueFailsToCompileAndNamesWithLock() throws {
    let (compiled, diagnostics) = try typeCheck(
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
  func inlineDefaultAndMutationThroughWithLockCompile() throws {
    let (compiled, diagnostics) = try typeCheck(
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
}
