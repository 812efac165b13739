import Foundation
import Streams
import Tether
import TetherHTTP
import TetherSupport

/// One Firebase installation: the identity (FID) and the tokens a fetch needs.
struct FirebaseInstallation: Sendable, Equatable {
  var fid: String
  var refreshToken: String
  var authToken: String
  var authTokenExpiry: Date
  var appID: String
  var projectID: String
}

/// Registers the installation, refreshes its auth token, and keeps both in a file next to the
/// config cache so that a restart reuses them (Firebase counts each registration as a new
/// install and rate-limits them).
///
/// An actor: the fetch and the realtime connection ask for tokens concurrently, and one
/// registration or refresh must serve both (``pending``).
actor FirebaseInstallations {
  /// A token expiring within this many seconds is refreshed before use, as the SDKs do.
  static let expiryBuffer: TimeInterval = 60 * 60

  let client: HTTPClient
  let apiKey: String
  let projectID: String
  let appID: String
  let root: URL

  private var fileURL: URL?
  private var loaded = false
  private var current: FirebaseInstallation? {
    didSet { ready.withLock { $0 = current } }
  }
  /// ``current`` once loaded, readable without a hop onto the actor: a fetch with a valid
  /// token (nearly every fetch) takes it from here.
  private nonisolated let ready = Lock<FirebaseInstallation?>(nil)
  private var pending: Task<FirebaseInstallation, any Error>?

  init(apiKey: String, projectID: String, appID: String, root: URL) {
    self.apiKey = apiKey
    self.projectID = projectID
    self.appID = appID
    self.root = root
    client = HTTPClient(
      baseURL: root, headers: [:], sensitiveHeaders: ["x-goog-api-key"],
      timeout: .seconds(30), maximumResponseSize: 64 << 10, retryPolicy: .none)
  }

  /// Where the installation is kept; `nil` keeps it in memory only.
  func setFileURL(_ url: URL?) {
    guard url != fileURL else { return }
    fileURL = url
    loaded = false
    ready.withLock { $0 = nil }
  }

  /// The FID, when the installation is known.
  var fid: String? { current?.fid }

  /// The loaded installation when its token is valid for at least ``expiryBuffer``, without
  /// waiting for the actor; `nil` sends the caller to ``installation(rejecting:)``.
  nonisolated func validInstallation() -> FirebaseInstallation? {
    guard let installation = ready.withLock({ $0 }),
      installation.authTokenExpiry.timeIntervalSinceNow > Self.expiryBuffer
    else { return nil }
    return installation
  }

  /// A registered installation with a token valid for at least ``expiryBuffer``.
  ///
  /// - Parameter rejectedToken: A token the server refused: a new one is generated unless the
  ///   installation already holds another.
  func installation(
    rejecting rejectedToken: String? = nil
  ) async throws(RemoteConfigError) -> FirebaseInstallation {
    if let pending { return try await Self.value(of: pending) }
    loadIfNeeded()
    if let current, current.authToken != rejectedToken,
      current.authTokenExpiry.timeIntervalSinceNow > Self.expiryBuffer
    {
      ready.withLock { $0 = current }
      return current
    }
    let existing = current
    let task = Task { try await self.obtain(from: existing) }
    pending = task
    defer { pending = nil }
    let installation = try await Self.value(of: task)
    current = installation
    save(installation)
    return installation
  }

  private static func value(
    of task: Task<FirebaseInstallation, any Error>
  ) async throws(RemoteConfigError) -> FirebaseInstallation {
    do {
      return try await task.value
    } catch {
      throw RemoteConfigError(error)
    }
  }

  /// A new token for `existing`, or a new registration when there is none or the server no
  /// longer knows it (401, 404).
  private nonisolated func obtain(
    from existing: FirebaseInstallation?
  ) async throws -> FirebaseInstallation {
    if let existing {
      do {
        return try await generateToken(for: existing)
      } catch RemoteConfigError.unauthorized, RemoteConfigError.unexpectedStatus(404) {
        // The installation was deleted or its refresh token revoked: register anew.
      }
    }
    return try await register()
  }

  private nonisolated func register() async throws -> FirebaseInstallation {
    let body: JSONValue = .object([
      "fid": .string(Self.newFID()), "authVersion": "FIS_v2", "appId": .string(appID),
      "sdkVersion": .string(FirebaseConfigSource.sdkVersion),
    ])
    let url = FirebaseEndpoints.url(
      root, "/v1/projects/\(FirebaseEndpoints.escape(projectID))/installations")
    let answer = try await post(url, body: body, authorization: nil)
    guard case .string(let fid)? = answer["fid"],
      case .string(let refresh)? = answer["refreshToken"],
      case .object(let auth)? = answer["authToken"], let (token, expiry) = Self.token(in: auth)
    else {
      throw RemoteConfigError.malformedJSON("an installation has fid, refreshToken and authToken")
    }
    return FirebaseInstallation(
      fid: fid, refreshToken: refresh, authToken: token, authTokenExpiry: expiry, appID: appID,
      projectID: projectID)
  }

  private nonisolated func generateToken(
    for installation: FirebaseInstallation
  ) async throws -> FirebaseInstallation {
    let body: JSONValue = .object([
      "installation": .object([
        "sdkVersion": .string(FirebaseConfigSource.sdkVersion), "appId": .string(appID),
      ])
    ])
    let url = FirebaseEndpoints.url(
      root,
      "/v1/projects/\(FirebaseEndpoints.escape(projectID))/installations/"
        + "\(FirebaseEndpoints.escape(installation.fid))/authTokens:generate")
    let answer = try await post(url, body: body, authorization: installation.refreshToken)
    guard let (token, expiry) = Self.token(in: answer) else {
      throw RemoteConfigError.malformedJSON("an auth token has token and expiresIn")
    }
    var renewed = installation
    renewed.authToken = token
    renewed.authTokenExpiry = expiry
    return renewed
  }

  /// Posts `body` and returns the answer's JSON object; a 5xx is tried once more.
  private nonisolated func post(
    _ url: URL, body: JSONValue, authorization refreshToken: String?
  ) async throws -> [String: JSONValue] {
    var request = HTTPRequest(method: .post, url: url, body: body.jsonData())
    request.setHeader("Content-Type", "application/json")
    request.setHeader("Accept", "application/json")
    request.setHeader("x-goog-api-key", apiKey)
    if let refreshToken { request.setHeader("Authorization", "FIS_v2 \(refreshToken)") }
    var response: HTTPResponseMessage
    var attempt = 1
    while true {
      do {
        response = try await client.response(for: request)
      } catch {
        throw RemoteConfigError(http: error, timeout: 30)
      }
      guard (500..<600).contains(response.status), attempt == 1 else { break }
      attempt += 1
    }
    guard response.status == 200 || response.status == 201 else {
      throw FirebaseFetchAnswer.error(status: response.status, retryAfter: response.retryAfter)
    }
    guard case .object(let object)? = try? JSONValue(parsing: response.body) else {
      throw RemoteConfigError.malformedJSON("the Installations answer is not a JSON object")
    }
    return object
  }

  /// `{"token", "expiresIn": "604800s"}` → the token and its expiry (at most 30 days ahead).
  private static func token(in object: [String: JSONValue]) -> (String, Date)? {
    guard case .string(let token)? = object["token"], !token.isEmpty else { return nil }
    var seconds: Double = 60 * 60
    if case .string(var text)? = object["expiresIn"] {
      if text.hasSuffix("s") { text.removeLast() }
      if let value = Double(text), value.isFinite { seconds = value }
    }
    return (token, Date().addingTimeInterval(min(max(0, seconds), 30 * 24 * 60 * 60)))
  }

  /// 17 random bytes whose first four bits are `0111`, URL-safe base64, 22 characters.
  static func newFID() -> String {
    var bytes = (0..<17).map { _ in UInt8.random(in: 0...255) }
    bytes[0] = 0b0111_0000 | (bytes[0] & 0b0000_1111)
    let text = Data(bytes).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    return String(text.prefix(22))
  }

  // MARK: - Persistence

  private func loadIfNeeded() {
    guard !loaded else { return }
    loaded = true
    guard let fileURL, let data = try? Data(contentsOf: fileURL),
      case .object(let object)? = try? JSONValue(parsing: data),
      case .string(let fid)? = object["fid"], case .string(let refresh)? = object["refreshToken"],
      case .string(let token)? = object["authToken"],
      object["appID"] == .string(appID), object["projectID"] == .string(projectID)
    else { return }
    let expiry: Date
    switch object["authTokenExpiry"] {
    case .double(let seconds)?: expiry = Date(timeIntervalSince1970: seconds)
    case .int(let seconds)?: expiry = Date(timeIntervalSince1970: Double(seconds))
    default: return
    }
    current = FirebaseInstallation(
      fid: fid, refreshToken: refresh, authToken: token, authTokenExpiry: expiry, appID: appID,
      projectID: projectID)
  }

  /// Writes the installation atomically, readable by this user only (it holds credentials).
  /// A failure is not fatal: the next start registers anew.
  private func save(_ installation: FirebaseInstallation) {
    guard let fileURL else { return }
    let document: JSONValue = .object([
      "format": .int(1), "fid": .string(installation.fid),
      "refreshToken": .string(installation.refreshToken),
      "authToken": .string(installation.authToken),
      "authTokenExpiry": .double(installation.authTokenExpiry.timeIntervalSince1970),
      "appID": .string(installation.appID), "projectID": .string(installation.projectID),
    ])
    _ = try? FileSystem.writeAtomically(
      document.jsonData(), to: fileURL.path, sync: false, permissions: 0o600)
  }
}
