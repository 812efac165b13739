import Foundation
import Streams
import Tether
import TetherHTTP
import TetherSupport

/// A config source that speaks Firebase Remote Config's wire protocol, so a Linux server or
/// command-line tool reads a Firebase project's config with no Firebase SDK.
///
/// ```swift
/// // The values of the Firebase console's app config (Project settings → Your apps).
/// let source = FirebaseConfigSource(
///   apiKey: "AIzaSy…", projectID: "my-project", appID: "1:1234567890:web:abc123",
///   customSignals: ["plan": "pro"], realtime: FirebaseRealtimeSettings())
/// let config = RemoteConfig(source: source, cacheURL: cacheDirectory.appendingPathComponent("rc.json"))
/// try await config.fetchAndActivate()
/// config.startPolling(every: .seconds(15 * 60))   // the fallback while realtime is down
/// ```
///
/// - Identity: the source registers a Firebase installation (FID and tokens) on first use and
///   refreshes its auth token before it expires. With a ``RemoteConfig`` cache URL they are
///   kept next to the cache (`<cache name>.firebase-installation`, mode 0600), so a restart
///   reuses them. A fetch the server refuses with 401/403 gets a new token and is sent once
///   more; a second refusal is ``RemoteConfigError/unauthorized(status:)``.
/// - Fetch: `POST …/namespaces/{namespace}:fetch` with the last `ETag` in `If-None-Match`;
///   `NO_CHANGE` and 304 are "not modified" and cost no decoding; `NO_TEMPLATE` and
///   `EMPTY_CONFIG` are an empty config. Entries arrive as strings (`"20"`, `"true"`, JSON
///   text), which every typed key decodes. The `templateVersion` is the config version, so an
///   older template is never applied.
/// - Throttling: 429, 500, 503 and 504 (and `INSTANCE_STATE_UNSPECIFIED`) start an
///   exponential back-off (``throttleBackoff`` doubled per consecutive answer, at most 4 h, at
///   least the server's `Retry-After`); until it ends every fetch fails at once with status
///   `.throttled` and no request. Only server answers extend it: a network failure never does.
/// - Custom signals (``setCustomSignals(_:)``) go with every fetch; changing them makes the
///   next fetch ignore the ETag and the minimum fetch interval.
/// - Realtime (with `realtime` settings): a streamed connection announces each new template
///   version; the source then fetches until that version arrives, without waiting for a
///   poll. See ``realtimeState``.
///
/// Not supported: Analytics (no events are logged), A/B-test exposure logging, and
/// personalization (its metadata is ignored).
public final class FirebaseConfigSource: CacheAttachedSource {
  /// The `sdkVersion` sent to Firebase.
  public static let sdkVersion = "tether-1.0.0"

  /// The Web API key.
  public let apiKey: String
  /// The project ID, such as `my-project`.
  public let projectID: String
  /// The app ID, such as `1:1234567890:web:abc123`.
  public let appID: String
  /// The Remote Config namespace; `firebase` unless the project uses another.
  public let namespace: String
  /// The app metadata sent with every fetch.
  public let app: FirebaseAppInfo
  /// The realtime connection's settings, or `nil` when the source only polls.
  public let realtime: FirebaseRealtimeSettings?
  /// The first throttling back-off, in seconds (doubled for each further throttling answer,
  /// randomized between half and all of it). Default 60.
  public let throttleBackoff: TimeInterval
  /// Where requests go.
  public let endpoints: FirebaseEndpoints

  struct State: Sendable {
    var customSignals: [String: JSONValue]
    /// Whether the signals changed since the last fetch that reached the server.
    var signalsChanged = false
    var signalsGeneration = 0
    /// The newest template version fetched or known from the config.
    var knownVersion = 0
    var lastETag: String?
    /// A version the realtime stream announced that no fetch has returned yet.
    var realtimeTarget: Int?
    var throttleCount = 0
    var throttledUntil: Date?
    var throttleError: RemoteConfigError?
    var markStale: (@Sendable () -> Void)?
    var realtimeState = FirebaseRealtimeState.off
    /// The last fetch body built, and what it was built from: polls with the same
    /// installation and signals send the same bytes without encoding them again.
    var fetchBody: FetchBody?
    /// The last fetch request and what it was built from: a poll repeats it unchanged.
    var fetchRequest: CachedFetchRequest?
  }

  /// A fetch request body and the installation and signals it carries.
  struct CachedFetchRequest: Sendable {
    var body: Data
    var authToken: String
    var etag: String?
    var type: String
    var timeout: TimeInterval
    var request: HTTPRequest
  }

  struct FetchBody: Sendable {
    var fid: String
    var authToken: String
    var signalsGeneration: Int
    var data: Data
  }

  let state: Lock<State>
  let installations: FirebaseInstallations
  let client: HTTPClient
  /// The fetch endpoint with its escaped path and API key: the same for every fetch.
  let fetchURL: URL
  let realtimeSubject = CurrentValueSubject<FirebaseRealtimeState, Never>(.off)

  /// Creates a source for one Firebase app.
  ///
  /// - Parameters:
  ///   - apiKey: The Web API key (`apiKey` in the console's app config).
  ///   - projectID: The project ID (`projectId`).
  ///   - appID: The app ID (`appId`).
  ///   - namespace: The Remote Config namespace; default `firebase`.
  ///   - customSignals: Signals for the template's custom-signal conditions (strings or
  ///     numbers, sent as strings as the SDKs do); invalid ones are left out
  ///     (``setCustomSignals(_:)`` reports them).
  ///   - app: App metadata sent with every fetch.
  ///   - realtime: Settings for the realtime connection; `nil` (the default) only polls.
  ///   - throttleBackoff: The first back-off after a throttling answer, in seconds.
  ///   - endpoints: Where requests go; Google's by default.
  public init(
    apiKey: String, projectID: String, appID: String, namespace: String = "firebase",
    customSignals: [String: JSONValue] = [:], app: FirebaseAppInfo = FirebaseAppInfo(),
    realtime: FirebaseRealtimeSettings? = nil, throttleBackoff: TimeInterval = 60,
    endpoints: FirebaseEndpoints = .production
  ) {
    self.apiKey = apiKey
    self.projectID = projectID
    self.appID = appID
    self.namespace = namespace
    self.app = app
    self.realtime = realtime
    self.throttleBackoff = max(0.001, throttleBackoff)
    self.endpoints = endpoints
    state = Lock(
      State(customSignals: customSignals.filter { Self.problem(with: $0.value) == nil }))
    installations = FirebaseInstallations(
      apiKey: apiKey, projectID: projectID, appID: appID, root: endpoints.installations)
    fetchURL = FirebaseEndpoints.url(
      endpoints.remoteConfig,
      "/v1/projects/\(FirebaseEndpoints.escape(projectID))/namespaces/"
        + "\(FirebaseEndpoints.escape(namespace)):fetch",
      query: [("key", apiKey)])
    client = HTTPClient(
      baseURL: endpoints.remoteConfig, headers: [:],
      sensitiveHeaders: ["x-goog-api-key", "x-goog-firebase-installations-auth"],
      maximumResponseSize: 4 << 20, retryPolicy: .none)
  }

  // MARK: - Custom signals

  /// The custom signals sent with every fetch.
  public var customSignals: [String: JSONValue] { state.withLock { $0.customSignals } }

  /// Merges `signals` into the custom signals (a `.null` value removes that signal); the next
  /// fetch sends them, ignoring the ETag and the ``RemoteConfig``'s minimum fetch interval.
  ///
  /// Firebase's `customSignals` is a map of strings: as every SDK, the source sends a number
  /// as its decimal text (`5` as `"5"`), and numeric conditions still compare it as a number.
  ///
  /// ```swift
  /// try source.setCustomSignals(["plan": "pro", "beta_opt_in": .null])
  /// try await config.fetchAndActivate()   // goes to the server now
  /// ```
  ///
  /// - Throws: ``FirebaseConfigSourceError/invalidCustomSignal(key:reason:)`` for a signal
  ///   that breaks Firebase's limits; the signals are unchanged then.
  public func setCustomSignals(
    _ signals: [String: JSONValue]
  ) throws(FirebaseConfigSourceError) {
    for (key, value) in signals.sorted(by: { $0.key < $1.key }) {
      if key.isEmpty || key.count > 250 {
        throw .invalidCustomSignal(key: key, reason: "a key has 1 to 250 characters")
      }
      if let problem = Self.problem(with: value) {
        throw .invalidCustomSignal(key: key, reason: problem)
      }
    }
    let markStale = try state.withLock {
      state throws(FirebaseConfigSourceError) -> (@Sendable () -> Void)? in
      var merged = state.customSignals
      for (key, value) in signals {
        if value == .null { merged.removeValue(forKey: key) } else { merged[key] = value }
      }
      if merged.count > 100 {
        throw .invalidCustomSignal(
          key: signals.keys.sorted().first ?? "", reason: "at most 100 signals")
      }
      guard merged != state.customSignals else { return nil }
      state.customSignals = merged
      state.signalsChanged = true
      state.signalsGeneration += 1
      return state.markStale
    }
    markStale?()
  }

  /// A signal as the SDKs send it: a string as is, a number as its decimal text.
  static func signalText(_ value: JSONValue) -> String {
    switch value {
    case .string(let text): text
    case .int(let number): String(number)
    case .double(let number):
      number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    default: value.jsonText
    }
  }

  private static func problem(with value: JSONValue) -> String? {
    switch value {
    case .string(let text): text.count > 500 ? "a value has at most 500 characters" : nil
    case .int, .null: nil
    case .double(let number): number.isFinite ? nil : "a number must be finite"
    default: "a value is a string or a number (null removes the signal)"
    }
  }

  // MARK: - Status

  /// The installation's ID (FID), once registered or read from the installation file.
  public var installationID: String? {
    get async { await installations.fid }
  }

  /// When the current throttling back-off ends, or `nil` when the source is not throttled.
  public var throttledUntil: Date? {
    state.withLock { state in state.throttledUntil.flatMap { $0 > Date() ? $0 : nil } }
  }

  /// Where the realtime connection stands now.
  public var realtimeState: FirebaseRealtimeState { state.withLock { $0.realtimeState } }

  /// The realtime state now, then each change of it.
  public var realtimeStatePublisher: AnyPublisher<FirebaseRealtimeState, Never> {
    realtimeSubject.eraseToAnyPublisher()
  }

  func setRealtimeState(_ new: FirebaseRealtimeState) {
    let changed = state.withLock { state in
      defer { state.realtimeState = new }
      return state.realtimeState != new
    }
    if changed { realtimeSubject.send(new) }
  }

  // MARK: - RemoteConfigSource

  func attach(cacheURL: URL?, markStale: @escaping @Sendable () -> Void) {
    state.withLock { $0.markStale = markStale }
    let file = cacheURL.map {
      $0.deletingLastPathComponent()
        .appendingPathComponent($0.lastPathComponent + ".firebase-installation")
    }
    let installations = installations
    // The actor hop is ordered before any fetch: fetches await the same actor after this.
    let set = Task { await installations.setFileURL(file) }
    pendingAttach.withLock { $0 = set }
  }

  let pendingAttach = Lock<Task<Void, Never>?>(nil)

  /// Starts the realtime connection when ``realtime`` is set.
  public func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> AnyCancellable? {
    guard let realtime else { return nil }
    let connection = FirebaseRealtimeConnection(
      source: self, settings: realtime, onChange: onChange)
    connection.start()
    return AnyCancellable {
      connection.cancel()
      self.setRealtimeState(.off)
    }
  }

  /// Fetches the template's values for this installation, its signals and app metadata.
  public func fetch(_ request: ConfigFetchRequest) async throws -> ConfigFetchResult {
    if let attaching = pendingAttach.withLock({ $0 }) {
      await attaching.value
      pendingAttach.withLock { if $0 == attaching { $0 = nil } }
    }
    let now = Date()
    let throttled = state.withLock { state -> RemoteConfigError? in
      if let number = request.previousVersion?.number {
        state.knownVersion = max(state.knownVersion, number)
      }
      guard let until = state.throttledUntil, until > now else { return nil }
      let remaining = until.timeIntervalSince(now).rounded(.up)
      return switch state.throttleError {
      case .serverError(let status, _)?: .serverError(status: status, retryAfter: remaining)
      default: .throttled(status: 429, retryAfter: remaining)
      }
    }
    if let throttled { throw throttled }
    var attempt = 1
    var newest = ConfigFetchResult.notModified
    while true {
      // A realtime announcement asks for a version a lagging backend may not serve yet: as
      // the SDKs, each of its (at most 3) fetches goes after a random delay of up to a few
      // seconds, until the fetched template reaches the announced version.
      if let delay = announcementFetchDelay() {
        do {
          try await Task.sleep(for: delay)
        } catch {
          return newest
        }
      }
      let result = try await fetchOnce(request, attempt: attempt)
      if case .modified = result { newest = result }
      let lastAttempt = attempt >= FirebaseRealtimeSettings.announcementFetchAttempts
      let missing = state.withLock { state -> Bool in
        guard let target = state.realtimeTarget else { return false }
        // Reached, or given up after the last attempt as the SDKs do: later fetches are
        // ordinary ones (polls), not delayed.
        if state.knownVersion >= target || lastAttempt {
          state.realtimeTarget = nil
          return false
        }
        return true
      }
      guard missing, !Task.isCancelled else { return newest }
      attempt += 1
    }
  }

  /// The wait before a fetch that follows a realtime announcement; `nil` for other fetches.
  private func announcementFetchDelay() -> Duration? {
    guard let realtime, state.withLock({ $0.realtimeTarget != nil }) else { return nil }
    let backoff = realtime.announcementFetchDelay
    return backoff.delay(afterFailures: 1) ?? backoff.maximum
  }

  private func fetchOnce(
    _ request: ConfigFetchRequest, attempt: Int
  ) async throws -> ConfigFetchResult {
    var installation: FirebaseInstallation
    if let valid = installations.validInstallation() {
      installation = valid
    } else {
      installation = try await installations.installation()
    }
    var tokenRefreshed = false
    while true {
      let (body, generation, ignoreETag, realtimeFetch) = fetchBody(for: installation)
      let etag = ignoreETag ? nil : request.previousVersion?.etag
      let httpRequest = cachedFetchRequest(
        installation, body: body, etag: etag,
        type: realtimeFetch ? "REALTIME/\(attempt)" : "BASE/\(attempt)", timeout: request.timeout)
      let response: HTTPResponseMessage
      do {
        response = try await client.response(for: httpRequest)
      } catch {
        // A network failure: reported, but it never extends the back-off.
        throw RemoteConfigError(http: error, timeout: request.timeout)
      }
      if response.status == 401 || response.status == 403, !tokenRefreshed {
        tokenRefreshed = true
        installation = try await installations.installation(rejecting: installation.authToken)
        continue
      }
      return try interpret(response, signalsGeneration: generation)
    }
  }

  /// The fetch body for `installation` and the current signals (built again only when either
  /// changed), with the signals' generation and the fetch's flags, read in one critical
  /// section.
  private func fetchBody(
    for installation: FirebaseInstallation
  ) -> (body: Data, generation: Int, ignoreETag: Bool, realtimeFetch: Bool) {
    let (cached, signals, generation, ignoreETag, realtimeFetch) = state.withLock { state in
      let body = state.fetchBody.flatMap { body in
        body.fid == installation.fid && body.authToken == installation.authToken
          && body.signalsGeneration == state.signalsGeneration ? body.data : nil
      }
      return (
        body, state.customSignals, state.signalsGeneration, state.signalsChanged,
        state.realtimeTarget != nil
      )
    }
    if let cached { return (cached, generation, ignoreETag, realtimeFetch) }
    var fields = app.fetchFields
    fields["app_instance_id"] = .string(installation.fid)
    fields["app_instance_id_token"] = .string(installation.authToken)
    fields["app_id"] = .string(appID)
    fields["sdk_version"] = .string(Self.sdkVersion)
    // Every SDK sends the signals as a map of strings (numbers as their decimal text), and
    // Firebase rejects any other JSON type with 400.
    fields["custom_signals"] = .object(signals.mapValues { .string(Self.signalText($0)) })
    let data = JSONValue.object(fields).jsonData()
    state.withLock { state in
      state.fetchBody = FetchBody(
        fid: installation.fid, authToken: installation.authToken,
        signalsGeneration: generation, data: data)
    }
    return (data, generation, ignoreETag, realtimeFetch)
  }

  /// ``fetchRequest(_:body:etag:type:timeout:)``, reused while its inputs stay the same (every
  /// poll of an unchanged installation): building the headers is most of a 304's own cost.
  private func cachedFetchRequest(
    _ installation: FirebaseInstallation, body: Data, etag: String?,
    type: String, timeout: TimeInterval
  ) -> HTTPRequest {
    let cached = state.withLock { state -> HTTPRequest? in
      guard let last = state.fetchRequest, last.authToken == installation.authToken,
        last.etag == etag, last.type == type, last.timeout == timeout, last.body == body
      else { return nil }
      return last.request
    }
    if let cached { return cached }
    let request = fetchRequest(installation, body: body, etag: etag, type: type, timeout: timeout)
    state.withLock {
      $0.fetchRequest = CachedFetchRequest(
        body: body, authToken: installation.authToken, etag: etag, type: type, timeout: timeout,
        request: request)
    }
    return request
  }

  private func fetchRequest(
    _ installation: FirebaseInstallation, body: Data, etag: String?,
    type: String, timeout: TimeInterval
  ) -> HTTPRequest {
    HTTPRequest(
      method: .post, url: fetchURL,
      headers: [
        "Content-Type": "application/json",
        "If-None-Match": etag ?? "*",
        "X-Goog-Firebase-Installations-Auth": installation.authToken,
        "X-Firebase-RC-Fetch-Type": type,
      ],
      body: body, timeout: .milliseconds(Int64(max(0.001, min(timeout, 86_400)) * 1000)))
  }

  /// What a fetch answer means; records versions, ETag and the throttling state.
  private func interpret(
    _ response: HTTPResponseMessage, signalsGeneration: Int
  ) throws -> ConfigFetchResult {
    let now = Date()
    var status = response.status
    var object: [String: JSONValue] = [:]
    if status == 200 {
      guard case .object(let parsed)? = try? JSONValue(parsing: response.body) else {
        throw RemoteConfigError.malformedJSON("a Firebase fetch answer is a JSON object")
      }
      object = parsed
      // A 200 that carries an error object is a failed fetch (the iOS SDK checks for it), not
      // an empty template.
      if case .object(let error)? = object["error"] {
        throw RemoteConfigError.source(
          FirebaseConfigSourceError.serviceError(
            code: Self.templateVersion(error["code"]),
            status: error["status"].flatMap {
              if case .string(let text) = $0 { text } else { nil }
            },
            message: error["message"].flatMap {
              if case .string(let text) = $0 { text } else { nil }
            }))
      }
      if object["state"] == .string("INSTANCE_STATE_UNSPECIFIED") { status = 500 }
      if object["state"] == .string("NO_CHANGE") { status = 304 }
    }
    if [429, 500, 503, 504].contains(status) {
      let error = state.withLock { state -> RemoteConfigError in
        state.throttleCount += 1
        let backoff = Backoff(
          initial: .milliseconds(Int64(min(max(0, throttleBackoff), 4 * 60 * 60) * 1000)),
          maximum: .seconds(4 * 60 * 60), jitter: .equal)
        let delay =
          backoff.delay(
            afterFailures: state.throttleCount,
            retryAfter: response.retryAfter.map { .milliseconds(Int64($0 * 1000)) })
          ?? backoff.maximum
        let wait = delay.timeInterval
        state.throttledUntil = now.addingTimeInterval(wait)
        let error: RemoteConfigError =
          status == 429
          ? .throttled(status: 429, retryAfter: wait)
          : .serverError(status: status, retryAfter: wait)
        state.throttleError = error
        return error
      }
      throw error
    }
    guard status == 200 || status == 304 else {
      throw Self.error(status: status, retryAfter: response.retryAfter)
    }
    let version = Self.templateVersion(object["templateVersion"])
    let etag = Self.validETag(response.header("etag"))
    state.withLock { state in
      state.throttleCount = 0
      state.throttledUntil = nil
      state.throttleError = nil
      if state.signalsGeneration == signalsGeneration { state.signalsChanged = false }
      if let version { state.knownVersion = max(state.knownVersion, version) }
      if let etag { state.lastETag = etag }
    }
    if status == 304 { return .notModified }
    var entries: [String: JSONValue] = [:]
    switch object["state"] {
    case .string("NO_TEMPLATE")?, .string("EMPTY_CONFIG")?: break
    default:
      if case .object(let values)? = object["entries"] { entries = values }
    }
    return .modified(
      ConfigPayload(entries: entries, version: ConfigVersion(etag: etag, number: version)))
  }

  /// `"42"` or `42` → 42, when it is a sane version number.
  static func templateVersion(_ value: JSONValue?) -> Int? {
    let number: Int? =
      switch value {
      case .string(let text)?: Int(text)
      case .int(let value)?: value
      default: nil
      }
    return number.flatMap { $0 >= 0 ? $0 : nil }
  }

  /// The ETag as sent (Firebase's are not always quoted), when it is printable and bounded.
  static func validETag(_ value: String?) -> String? {
    guard let value, !value.isEmpty, value.utf8.count <= 1024,
      value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F })
    else { return nil }
    return value
  }

  /// The config error for a Firebase HTTP status that is neither success nor throttling.
  static func error(status: Int, retryAfter: Double?) -> RemoteConfigError {
    switch status {
    case 401, 403: .unauthorized(status: status)
    case 429: .throttled(status: 429, retryAfter: retryAfter)
    case 500..<600: .serverError(status: status, retryAfter: retryAfter)
    default: .unexpectedStatus(status)
    }
  }

  // MARK: - Used by the realtime connection

  /// The version the config has and the ETag, for the realtime request.
  var realtimeBasis: (version: Int, etag: String?) {
    state.withLock { ($0.knownVersion, $0.lastETag) }
  }

  /// Records an announced version; `true` when it is newer than what the config has.
  func announce(version: Int) -> Bool {
    state.withLock { state in
      guard version > state.knownVersion else { return false }
      state.realtimeTarget = max(state.realtimeTarget ?? 0, version)
      return true
    }
  }
}
