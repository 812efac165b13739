import Foundation

/// Whether this process is running tests, which decides where the process scope keeps
/// `.fileStorage` files and `.appStorage` entries (see ``SharedStorage/process``).
///
/// The signals are the ones XCTest and Swift Testing leave in the process they start:
///
/// - an `.xctest` bundle among the arguments, or as the executable itself (`swift test` on
///   Linux runs `NamePackageTests.xctest`; `xctest` on Apple platforms names the bundle it
///   loads);
/// - Swift Testing's `--testing-library` option, or SwiftPM's `swiftpm-testing-helper` as the
///   executable;
/// - XCTest's environment (`XCTestConfigurationFilePath`, `XCTestSessionIdentifier`,
///   `XCTestBundlePath`, which Xcode sets for an app-hosted test), together with a loaded
///   `.xctest` bundle.
///
/// A child process a test starts inherits the environment but not the arguments, and loads
/// no test bundle: it is not a test process, so its keys use the disk as any program's do.
enum TestProcess {
  /// Whether this process is running tests, decided once, from its start-up state.
  static let isRunningTests: Bool = {
    let info = ProcessInfo.processInfo
    return isRunningTests(
      arguments: info.arguments, environment: info.environment,
      loadedBundlePaths: { Bundle.allBundles.map(\.bundlePath) })
  }()

  /// The decision, from the process's arguments, environment and loaded bundles.
  static func isRunningTests(
    arguments: [String], environment: [String: String], loadedBundlePaths: () -> [String]
  ) -> Bool {
    if arguments.contains(where: namesTestBundle) { return true }
    if arguments.contains("--testing-library") { return true }
    if let executable = arguments.first?.split(separator: "/").last,
      executable == "swiftpm-testing-helper" || executable == "xctest"
    {
      return true
    }
    let xcTestVariables = [
      "XCTestConfigurationFilePath", "XCTestSessionIdentifier", "XCTestBundlePath",
    ]
    guard xcTestVariables.contains(where: { environment[$0] != nil }) else { return false }
    return loadedBundlePaths().contains(where: namesTestBundle)
  }

  /// Whether `path` is an `.xctest` bundle or a file inside one.
  private static func namesTestBundle(_ path: String) -> Bool {
    path.split(separator: "/").contains { $0.hasSuffix(".xctest") }
  }
}
