import Foundation
import TestSupport
import Testing

@testable import Tether

/// How Tether tells a process running tests (whose keys keep files and defaults in memory)
/// from any other, including a child process a test starts.
@Suite struct TestProcessTests {
  private let xcTestEnvironment = [
    "XCTestConfigurationFilePath": "/tmp/x.xctestconfiguration",
    "XCTestSessionIdentifier": "1234",
    "XCTestBundlePath": "/build/AppTests.xctest",
  ]

  private func isTest(
    _ arguments: [String], environment: [String: String] = [:], loaded: [String] = ["/usr/bin"]
  ) -> Bool {
    TestProcess.isRunningTests(
      arguments: arguments, environment: environment, loadedBundlePaths: { loaded })
  }

  @Test func thisProcessRunsTests() {
    #expect(TestProcess.isRunningTests)
    #expect(SharedStorage.process.files != nil)
    #expect(SharedStorage.process.defaults !== UserDefaults.standard)
  }

  @Test func swiftTestOnLinuxAndXCTestOnApplePlatformsAreTestProcesses() {
    #expect(isTest(["/p/.build/debug/AppPackageTests.xctest"]))
    #expect(
      isTest(["/p/.build/debug/AppPackageTests.xctest", "--testing-library", "swift-testing"]))
    #expect(isTest(["/Applications/Xcode.app/Contents/Developer/usr/bin/xctest", "/b/A.xctest"]))
    #expect(isTest(["/usr/libexec/swift/pm/swiftpm-testing-helper", "--test-bundle-path", "/b"]))
    #expect(isTest(["/b/A.xctest/Contents/MacOS/A"]))
  }

  @Test func anAppHostedTestIsOneByItsEnvironmentAndLoadedBundle() {
    #expect(isTest(["/Apps/My.app/My"], environment: xcTestEnvironment, loaded: ["/b/A.xctest"]))
  }

  /// A child inherits XCTest's environment, but neither the arguments nor the loaded bundle.
  @Test func aChildProcessOfATestIsNotOne() {
    #expect(!isTest(["/p/.build/debug/tether-test-child", "file-hold", "/tmp/a/v.json"]))
    #expect(
      !isTest(
        ["/p/.build/debug/tether-test-child", "file-write", "/tmp/b.json", "1", "2"],
        environment: xcTestEnvironment))
    #expect(!isTest(["/usr/bin/app"], environment: ["XCTestBundlePath": "/b/A.xctest"]))
  }

  /// A real child, started with XCTest's environment as a test on an Apple platform passes it
  /// on: its file key writes the real file.
  @Test func aRealChildProcessOfATestWritesRealFiles() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.file("child.json")
      let child = try ChildProcess(
        ["file-write", url.path, "7", "1"], environment: xcTestEnvironment)
      #expect(try await child.waitForExit() == .exited(0))
      #expect(FileManager.default.contents(atPath: url.path) == Data("7".utf8))
    }
  }

  @Test func anOrdinaryProgramIsNotOne() {
    #expect(!isTest(["/usr/local/bin/tour"]))
    #expect(!isTest([".build/debug/FirebaseConfig", "--verbose"]))
  }
}
