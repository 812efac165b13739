import Foundation

/// A fake Firebase backend on the loopback `TestHTTPServer`, written from Firebase's wire
/// protocol: Installations (register, auth-token refresh with expiry), the Remote Config fetch
/// (ETag, `NO_CHANGE` or 304, template versions, conditions on custom signals), and the
/// realtime stream (`latestTemplateVersionNumber`, `featureDisabled`, `retryIntervalSeconds`).
///
/// It is as strict as Google's service where a client could get it wrong: a custom signal
/// that is not a string is 400 `INVALID_ARGUMENT`, and the realtime stream is served at the
/// project *number*'s path (the project ID's is 404), as the SDKs address it.
///
/// ```swift
/// let firebase = try FirebaseFakeServer()
/// firebase.publish(["welcome_title": "Hi", "max_items": "20"],
///                  conditions: [.init(signal: "plan", equals: "pro", values: ["max_items": "50"])])
/// // point a FirebaseConfigSource at firebase.baseURL with firebase.apiKey/projectID/appID
/// firebase.server.inject(.status(429), at: firebase.fetchPath)   // fault injection
/// ```
///
/// All methods are thread-safe.
public final class FirebaseFakeServer: Sendable {
  /// A conditional value: when the fetch's custom signal `signal` equals `equals` (compared as
  /// numbers when both are numbers, as text otherwise), `values` replace the template's
  /// defaults. The first matching condition wins per key.
  public struct Condition: Sendable, Equatable {
    /// The custom signal's name.
    public var signal: String
    /// The signal's value that matches.
    public var equals: String
    /// The entries served when it matches.
    public var values: [String: String]

    /// Creates a condition.
    public init(signal: String, equals: String, values: [String: String]) {
      self.signal = signal
      self.equals = equals
      self.values = values
    }
  }

  /// How the fake answers a fetch whose `If-None-Match` matches.
  public enum NotModifiedAnswer: Sendable {
    /// 200 with `{"state": "NO_CHANGE"}`, as Firebase's fetch endpoint does.
    case noChangeState
    /// A bare 304.
    case status304
  }

  struct Template: Sendable {
    var version: Int
    var entries: [String: String]
    var conditions: [Condition]
  }

  struct State: Sendable {
    var template: Template?
    var previousTemplate: Template?
    var lag = 0
    var notModifiedAnswer = NotModifiedAnswer.noChangeState
    var tokenLifetime = 7 * 24 * 60 * 60
    var nextNumber = 1
    /// Registered FIDs by refresh token, and valid auth tokens with their FID and expiry.
    var refreshTokens: [String: String] = [:]
    var authTokens: [String: (fid: String, expiry: Date)] = [:]
    var registrations = 0
    var tokenRefreshes = 0
    var realtime = HTTPStream()
    /// ETags already computed, by template version and matching conditions.
    var etags: [Backend.TagKey: String] = [:]
    /// The last fetch body parsed, and what it said.
    var lastFetch: (body: Data, parsed: Backend.ParsedFetch)?
  }

  /// The loopback server underneath; inject faults on it (``fetchPath``, ``realtimePath``…).
  public let server: TestHTTPServer
  /// The Web API key requests must carry.
  public let apiKey = "fake-api-key"
  /// The project ID.
  public let projectID = "demo-project"
  /// The project number, the second field of ``appID``.
  public let projectNumber = "1234567890"
  /// The app ID (its project number is 1234567890).
  public let appID = "1:1234567890:web:fakeapp"
  /// The namespace served.
  public let namespace = "firebase"
  let backend: Backend

  /// Starts a fake with no template (fetches answer `NO_TEMPLATE`).
  public init() throws {
    server = try TestHTTPServer()
    backend = Backend()
    let backend = backend
    let apiKey = apiKey
    server.setHandler(at: installationsPath) { [weak server] request in
      guard let server else { return HTTPResponse(status: 503) }
      return backend.register(request, apiKey: apiKey, server: server)
    }
    server.setHandler(at: fetchPath) { request in backend.fetch(request, apiKey: apiKey) }
    server.injectPersistently(.stream(backend.state.withLock { $0.realtime }), at: realtimePath)
    // The realtime service names the project by its number, in the path as in the body (the
    // SDKs send the number in both); the project ID's path is not a resource there.
    server.setHandler(at: realtimePathByProjectID) { _ in
      Backend.error(404, "Requested entity was not found.", "NOT_FOUND")
    }
  }

  /// Stops the server.
  public func stop() { server.stop() }

  /// The root URL of every service (`FirebaseEndpoints.all(at:)`).
  public var baseURL: URL { server.baseURL }

  /// The Installations registration path.
  public var installationsPath: String { "/v1/projects/\(projectID)/installations" }
  /// The token-refresh path of installation `fid`.
  public func tokenPath(fid: String) -> String {
    "/v1/projects/\(projectID)/installations/\(fid)/authTokens:generate"
  }
  /// The fetch path.
  public var fetchPath: String { "/v1/projects/\(projectID)/namespaces/\(namespace):fetch" }
  /// The realtime stream's path, with the project number as the SDKs send it.
  public var realtimePath: String {
    "/v1/projects/\(projectNumber)/namespaces/\(namespace):streamFetchInvalidations"
  }
  /// The realtime path with the project ID instead of the number: 404, as no SDK uses it.
  public var realtimePathByProjectID: String {
    "/v1/projects/\(projectID)/namespaces/\(namespace):streamFetchInvalidations"
  }

  // MARK: - Template

  /// Publishes a new template version with `entries` (and conditional values); connected
  /// realtime clients are told its version at once.
  ///
  /// - Returns: The new template version.
  @discardableResult
  public func publish(_ entries: [String: String], conditions: [Condition] = []) -> Int {
    let (version, stream) = backend.state.withLock { state in
      let version = (state.template?.version ?? 0) + 1
      state.previousTemplate = state.template
      state.template = Template(version: version, entries: entries, conditions: conditions)
      state.etags = [:]
      return (version, state.realtime)
    }
    stream.send(Self.versionMessage(version))
    return version
  }

  /// The current template version (0 before any).
  public var templateVersion: Int { backend.state.withLock { $0.template?.version ?? 0 } }

  /// The next `count` fetches still serve the previous template, as a lagging backend would
  /// right after a publish.
  public func lagFetches(_ count: Int) {
    backend.state.withLock { $0.lag = max(0, count) }
  }

  /// How a matching `If-None-Match` is answered; `NO_CHANGE` by default.
  public func answerNotModified(with answer: NotModifiedAnswer) {
    backend.state.withLock { $0.notModifiedAnswer = answer }
  }

  // MARK: - Installations

  /// The lifetime of auth tokens issued from now on, in seconds (`expiresIn`).
  public func setAuthTokenLifetime(seconds: Int) {
    backend.state.withLock { $0.tokenLifetime = seconds }
  }

  /// Makes every auth token issued so far invalid (as if expired): fetches with them get 401.
  public func expireAuthTokens() {
    backend.state.withLock { $0.authTokens.removeAll() }
  }

  /// Forgets every installation: refreshing a token answers 404, so clients register again.
  public func deleteInstallations() {
    backend.state.withLock {
      $0.authTokens.removeAll()
      $0.refreshTokens.removeAll()
    }
  }

  /// How many installations were registered.
  public var registrationCount: Int { backend.state.withLock { $0.registrations } }
  /// How many auth tokens were generated with a refresh token.
  public var tokenRefreshCount: Int { backend.state.withLock { $0.tokenRefreshes } }

  // MARK: - Requests

  /// The fetch requests received, in order.
  public var fetchRequests: [RecordedRequest] { server.requests(at: fetchPath) }

  /// The JSON body of the `index`-th fetch request (the last one by default).
  public func fetchBody(_ index: Int? = nil) -> [String: Any]? {
    let requests = fetchRequests
    guard let request = index.map({ $0 < requests.count ? requests[$0] : nil }) ?? requests.last
    else { return nil }
    return try? JSONSerialization.jsonObject(with: request.body) as? [String: Any]
  }

  // MARK: - Realtime

  /// Sends `text` (a JSON object) to the connected realtime clients.
  public func sendRealtime(_ text: String) {
    backend.state.withLock { $0.realtime }.send(text)
  }

  /// Tells realtime clients that realtime is disabled for the project.
  public func disableRealtime() { sendRealtime(#"{"featureDisabled": true}"#) }

  /// Asks realtime clients to wait at least `seconds` before reconnecting.
  public func sendRetryInterval(seconds: Int) {
    sendRealtime(#"{"retryIntervalSeconds": \#(seconds)}"#)
  }

  /// Drops every open realtime connection (without a proper end); a new connection first
  /// receives the current template version, as Firebase's server sends it on connect.
  public func dropRealtimeStreams() {
    let version = templateVersion
    let fresh = HTTPStream()
    if version > 0 { fresh.send(Self.versionMessage(version)) }
    let old = backend.state.withLock { state in
      defer { state.realtime = fresh }
      return state.realtime
    }
    server.injectPersistently(.stream(fresh), at: realtimePath)
    old.abort()
  }

  /// How many realtime connections are open now.
  public var realtimeClientCount: Int { backend.state.withLock { $0.realtime }.clientCount }

  /// Waits until `count` realtime connections are open at once.
  public func waitForRealtimeClients(
    _ count: Int = 1, timeout: Duration = Deadline.defaultTimeout
  ) async throws {
    try await waitUntil("\(count) realtime client(s)", timeout: timeout) {
      realtimeClientCount >= count
    }
  }

  /// Waits until no realtime connection is open.
  public func waitForRealtimeClientsToLeave(
    timeout: Duration = Deadline.defaultTimeout
  ) async throws {
    try await waitUntil("no realtime client", timeout: timeout) { realtimeClientCount == 0 }
  }

  static func versionMessage(_ version: Int) -> String {
    "{\n  \"latestTemplateVersionNumber\": \"\(version)\"\n}"
  }
}
