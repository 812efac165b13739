import Foundation
import TestSupport
import Testing
import TetherHTTP
import TetherRemoteConfig

/// What goes on the wire besides the caller's intent: a path parameter never moves the request
/// to another path, every entry point sends the client's default headers, and a credential
/// header never follows a redirect to another origin.
@Suite struct HTTPRequestHygieneTests {
  struct UserPath: Encodable, Hashable, Sendable {
    var user: String
  }

  static let repos = Endpoint<UserPath, NoBody, [Item]>.get("/users/{user}/repos")

  // Guards: a placeholder filled with `..` or `.` left a dot segment (`/users/../repos`),
  // which the server or a proxy resolves to another resource.
  @Test(arguments: [("..", "/users/%2E%2E/repos"), (".", "/users/%2E/repos")])
  func dotSegmentsInPathParametersArePercentEncoded(
    _ user: String, _ target: String
  )
    async throws
  {
    let server = try TestHTTPServer()
    let client = HTTPClient(baseURL: server.baseURL, timeout: .seconds(10), retryPolicy: .none)
    _ = try? await client.send(Self.repos, UserPath(user: user))
    let recorded = try #require(server.requests.first, "the request reached the server")
    #expect(recorded.path.uppercased() == target.uppercased(), "the target was \(recorded.path)")
    #expect(recorded.query == nil)
  }

  // Guards: `response(for:)` did not add the client's default headers.
  @Test func responseForSendsTheClientsDefaultHeaders() async throws {
    let server = try TestHTTPServer()
    server.setDocument("{}", at: "/a")
    let client = HTTPClient(
      baseURL: server.baseURL, headers: ["X-Client": "tether-tests", "Authorization": "Bearer t"],
      timeout: .seconds(10), retryPolicy: .none)
    let response = try await client.response(
      for: HTTPRequest(url: server.url(for: "/a"), headers: ["X-Request": "1"]))
    #expect(response.status == 200)
    let recorded = try #require(server.requests(at: "/a").first)
    #expect(recorded.header("X-Client") == "tether-tests")
    #expect(recorded.header("Authorization") == "Bearer t")
    #expect(recorded.header("X-Request") == "1")
  }

  // Guards: `HTTPConfigSource` forwarded `X-API-Key` across a redirect to another origin (it
  // did not mark its credential headers sensitive).
  @Test func aConfigSourcesAPIKeyNeverFollowsARedirectToAnotherOrigin() async throws {
    let origin = try TestHTTPServer()
    let elsewhere = try TestHTTPServer()
    elsewhere.setDocument(#"{"flag":"on"}"#, at: "/config.json")
    origin.injectPersistently(
      .status(302, headers: ["Location": elsewhere.url(for: "/config.json").absoluteString]),
      at: "/config.json")
    let source = HTTPConfigSource(
      url: origin.url(for: "/config.json"), headers: ["X-API-Key": "secret-key-123"])
    // 30 s: a full parallel run has stalled every test for up to 13 s at its start.
    _ = try? await source.fetch(ConfigFetchRequest(previousVersion: nil, timeout: 30))
    let first = try #require(origin.requests(at: "/config.json").first)
    #expect(first.header("X-API-Key") == "secret-key-123", "the origin itself gets the key")
    let redirected = try #require(
      elsewhere.requests(at: "/config.json").first, "the redirect was followed")
    #expect(redirected.header("X-API-Key") == nil, "the other origin received the API key")
  }
}
