import Foundation
import TestSupport
import Testing
import TetherHTTP

/// TetherHTTP never loads libcurl on Linux (issue #34, item 5): a process that links only
/// TetherHTTP, after a real request through the engine, has neither libcurl nor
/// FoundationNetworking mapped. The test bundle itself links every module (TetherURLSession
/// included), so the libraries are read from a second process, `tether-http-probe`.
@Suite struct LinkedLibrariesTests {
  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/maps")))
  func aRequestThroughTheEngineLoadsNeitherLibcurlNorFoundationNetworking() async throws {
    let server = try TestHTTPServer()
    server.setDocument(#"{"ok":true}"#, at: "/status")
    let (outcome, libraries) = try await Probe.mappedLibraries(
      afterGetting: server.url(for: "/status"))
    #expect(outcome == "status 200 11 bytes")
    #expect(server.requestCount(at: "/status") == 1)
    // The list is real: the probe's own Foundation is in it.
    #expect(libraries.contains { $0.hasSuffix("/libFoundation.so") }, "\(libraries)")
    let networking = libraries.filter {
      $0.contains("libcurl") || $0.contains("libFoundationNetworking")
    }
    #expect(networking.isEmpty, "mapped after a request: \(networking)")
  }
}
