import Foundation
import TestSupport
import Testing
import TetherHTTP
import TetherRemoteConfig

/// One way a fetch can fail, and what the config must report for it.
struct FaultCase: Sendable, CustomTestStringConvertible {
  let name: String
  let fault: HTTPFault?
  let status: RemoteConfigFetchStatus
  let matches: @Sendable (RemoteConfigError) -> Bool
  var testDescription: String { name }
}

@Suite struct HTTPConfigSourceTests {
  static let original = document(["welcome_title": #""Original""#, "max_items": "3"])

  @Test func conditionalGetSendsTheETagAnd304ChangesNothing() async throws {
    let fixture = try await Fixture(Self.original)
    let modified = Date(timeIntervalSince1970: 1_780_000_000)
    let served = fixture.server.setDocument(Self.original, at: Fixture.path, lastModified: modified)
    let config = fixture.config
    let updates = Recorder(config.updates)
    try await config.fetchAndActivate()
    try await updates.waitForValues(1)

    config.isStale = true
    #expect(try await config.fetchAndActivate() == false)
    let requests = fixture.server.requests(at: Fixture.path)
    #expect(requests.count == 2)
    #expect(requests[0].header("If-None-Match") == nil)
    #expect(requests[1].header("If-None-Match") == served.etag)
    #expect(requests[1].header("If-Modified-Since") == HTTPDate.string(from: modified))
    #expect(config.lastFetchStatus == .success)
    #expect(config[.welcomeTitle] == "Original")

    // A change after the 304 is the next update: the 304 emitted nothing.
    fixture.serve(document(["welcome_title": #""Changed""#, "max_items": "3"]))
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(try await updates.waitForValues(2).count == 2)
    #expect(updates.values.last == ConfigUpdate(updatedKeys: ["welcome_title"]))
  }

  static let faults: [FaultCase] = [
    FaultCase(name: "500", fault: .status(500), status: .failure) {
      if case .serverError(500, nil) = $0 { return true } else { return false }
    },
    FaultCase(
      name: "503 with Retry-After", fault: .status(503, retryAfter: .seconds(2)), status: .throttled
    ) {
      if case .serverError(503, 2) = $0 { return true } else { return false }
    },
    FaultCase(name: "429", fault: .status(429), status: .throttled) {
      if case .throttled(429, nil) = $0 { return true } else { return false }
    },
    FaultCase(name: "delay past the timeout", fault: .delay(.seconds(3)), status: .failure) {
      if case .timedOut = $0 { return true } else { return false }
    },
    FaultCase(name: "connection refused", fault: nil, status: .failure) {
      if case .connectionFailed = $0 { return true } else { return false }
    },
    // An answer that arrived but cannot be read is not "could not reach the config source".
    FaultCase(
      name: "a body in a coding it cannot read",
      fault: .rawResponse(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\nxx"),
      status: .failure
    ) {
      guard case .source(let error) = $0, case .undecodable? = error as? HTTPError else {
        return false
      }
      return !$0.description.contains("could not reach")
    },
    FaultCase(name: "body cut off", fault: .truncatedBody(sending: 10), status: .failure) {
      if case .truncatedBody(_, 10) = $0 { return true } else { return false }
    },
    FaultCase(name: "malformed JSON", fault: .malformedBody(), status: .failure) {
      if case .malformedJSON = $0 { return true } else { return false }
    },
    FaultCase(
      name: "JSON that is not an object", fault: .status(200, body: "[1, 2]"), status: .failure
    ) {
      if case .notAnObject("array") = $0 { return true } else { return false }
    },
    FaultCase(name: "oversized body", fault: .oversizedBody(byteCount: 64 << 10), status: .failure)
    {
      if case .responseTooLarge(4096) = $0 { return true } else { return false }
    },
    FaultCase(
      name: "oversized chunked body", fault: .oversizedBody(byteCount: 64 << 10, chunked: true),
      status: .failure
    ) {
      if case .responseTooLarge(4096) = $0 { return true } else { return false }
    },
    FaultCase(name: "401", fault: .status(401), status: .failure) {
      if case .unauthorized(401) = $0 { return true } else { return false }
    },
    FaultCase(name: "403", fault: .status(403), status: .failure) {
      if case .unauthorized(403) = $0 { return true } else { return false }
    },
    FaultCase(name: "404", fault: .status(404), status: .failure) {
      if case .unexpectedStatus(404) = $0 { return true } else { return false }
    },
  ]

  @Test(arguments: faults)
  func aFaultIsReportedAndLeavesActiveValuesUntouched(_ fault: FaultCase) async throws {
    // 2 s: under the 3 s delay case, and far above what a loaded run needs for a quick
    // answer (0.5 s expired for a plain 404 in a loaded sanitizer run).
    let fixture = try await Fixture(
      Self.original, settings: RemoteConfigSettings(fetchTimeout: 2),
      maximumResponseSize: 4096)
    let config = fixture.config
    try await config.fetchAndActivate()
    fixture.serve(document(["welcome_title": #""Changed""#, "max_items": "4"]))

    let failing: RemoteConfig
    if let injected = fault.fault {
      fixture.server.inject(injected, at: Fixture.path)
      failing = config
    } else {
      // Connection refused: the same cache-less config pointed at a port nobody listens on.
      let closed = try await TestHTTPServer.start()
      let url = closed.url(for: Fixture.path)
      closed.stop()
      failing = config
      failing.configure(source: HTTPConfigSource(url: url), settings: config.settings)
    }
    failing.isStale = true
    await #expect(throws: RemoteConfigError.self) { try await failing.fetchAndActivate() }
    #expect(failing.lastFetchStatus == fault.status)
    let error = try #require(failing.lastError)
    #expect(fault.matches(error), "lastError: \(error)")
    #expect(!error.description.isEmpty)
    #expect(await failing.activate() == false)
    #expect(failing[.welcomeTitle] == "Original")
    #expect(failing[.maxItems] == 3)
  }

  @Test func retryAfterAsAnHTTPDateIsHonouredByTheNextFetch() async throws {
    let fixture = try await Fixture(Self.original)
    let config = fixture.config
    let injected = Date()
    fixture.server.inject(
      .status(429, retryAfter: .date(injected.addingTimeInterval(120))), at: Fixture.path)
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    let retryAfter = try #require(config.lastError?.retryAfter)
    // The date names whole seconds; on a loaded machine the answer may take a while to arrive.
    let elapsed = Date().timeIntervalSince(injected)
    #expect(retryAfter <= 120)
    #expect(retryAfter > 120 - elapsed - 1, "retryAfter \(retryAfter) after \(elapsed) s")
    // While the server's wait has not passed, fetch() does not call it.
    config.isStale = true
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    #expect(config.lastFetchStatus == .throttled)
    guard case .throttled(429, _)? = config.lastError else {
      Issue.record("lastError: \(String(describing: config.lastError))")
      return
    }
    #expect(fixture.requestCount == 1)
  }

  @Test func extraHeadersAreSent() async throws {
    let server = try await TestHTTPServer.start()
    server.setDocument(Self.original, at: Fixture.path)
    let source = HTTPConfigSource(
      url: server.url(for: Fixture.path), headers: ["Authorization": "Bearer token"])
    let result = try await source.fetch(ConfigFetchRequest(previousVersion: nil, timeout: 5))
    guard case .modified(let payload) = result else {
      Issue.record("expected a payload, got \(result)")
      return
    }
    #expect(payload.entries["max_items"] == .int(3))
    #expect(payload.version.etag == server.document(at: Fixture.path)?.etag)
    #expect(server.requests.first?.header("Authorization") == "Bearer token")
  }
}

@Suite struct HTTPConfigSourcePushTests {
  @Test func aServerSentEventMakesTheChangeActiveWithoutWaitingForAPoll() async throws {
    let server = try await TestHTTPServer.start()
    server.setDocument(document(["welcome_title": #""First""#]), at: Fixture.path)
    let events = HTTPStream.serverSentEvents()
    server.injectPersistently(.stream(events), at: "/events")
    let config = RemoteConfig(
      source: HTTPConfigSource(
        url: server.url(for: Fixture.path), eventsURL: server.url(for: "/events")),
      settings: RemoteConfigSettings(minimumFetchInterval: 3600, fetchTimeout: 5))
    try await config.fetchAndActivate()
    #expect(config[.welcomeTitle] == "First")
    try await events.waitForClients(1)
    #expect(!config.isPolling)

    server.setDocument(document(["welcome_title": #""Pushed""#]), at: Fixture.path)
    events.sendEvent("changed", id: "1")
    try await waitUntil("the pushed change") { config[.welcomeTitle] == "Pushed" }
    #expect(server.requests(at: Fixture.path).last?.header("If-None-Match") != nil)
  }
}
