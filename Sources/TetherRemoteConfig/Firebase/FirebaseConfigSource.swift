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
    var signals: FirebaseCustomSignals
    var throttle: FirebaseFetchThrottle
    /// The newest template version fetched or known from the config.
    var knownVersion = 0
    var lastETag: String?
    /// A version the realtime stream announced that no fetch has returned yet.
    var realtimeTarget: Int?
    var markStale: (@Sendable () -> Void)?
    var realtimeState = FirebaseRealtimeState.off
  }

  let state: Lock<State>
  /// The last fetch request, which a poll of an unchanged installation repeats; apart from
  /// `state` so that encoding a body never holds up readers of the status.
  let requests: Lock<FirebaseFetchRequestBuilder>
  let installations: FirebaseInstallations
  let client: HTTPClient
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
      State(
        signals: FirebaseCustomSignals(validAmong: customSignals),
        throttle: FirebaseFetchThrottle(initialBackoff: self.throttleBackoff)))
    requests = Lock(
      FirebaseFetchRequestBuilder(
        root: endpoints.remoteConfig, apiKey: apiKey, projectID: projectID,
        namespace: namespace, appID: appID, app: app, sdkVersion: Self.sdkVersion))
    installations = FirebaseInstallations(
      apiKey: apiKey, projectID: projectID, appID: appID, root: endpoints.installations)
    client = HTTPClient(
      baseURL: endpoints.remoteConfig, headers: [:],
      sensitiveHeaders: ["x-goog-api-key", "x-goog-firebase-installations-auth"],
      maximumResponseSize: 4 << 20, retryPolicy: .none)
  }

  // MARK: - Custom signals

  /// The custom signals sent with every fetch.
  public var customSignals: [String: JSONValue] { state.withLock { $0.signals.values } }

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
    try FirebaseCustomSignals.validate(signals)
    let markStale = try state.withLock {
      state throws(FirebaseConfigSourceError) -> (@Sendable () -> Void)? in
      try state.signals.merge(signals) ? state.markStale : nil
    }
    markStale?()
  }

  // MARK: - Status

  /// The installation's ID (FID), once registered or read from the installation file.
  public var installationID: String? {
    get async { await installations.fid }
  }

  /// When the current throttling back-off ends, or `nil` when the source is not throttled.
  public var throttledUntil: Date? {
    state.withLock { $0.throttle.throttledUntil(at: Date()) }
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
      return state.throttle.refusal(at: now)
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
      let (signals, realtimeFetch) = state.withLock { ($0.signals, $0.realtimeTarget != nil) }
      // Changed signals must reach the server: no ETag, so no "not modified".
      let etag = signals.changePending ? nil : request.previousVersion?.etag
      let type = FirebaseFetchRequestBuilder.fetchType(realtime: realtimeFetch, attempt: attempt)
      let httpRequest = requests.withLock {
        $0.request(
          fid: installation.fid, authToken: installation.authToken, signals: signals,
          etag: etag, type: type, timeout: request.timeout)
      }
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
      return try record(FirebaseFetchAnswer(response), signalsGeneration: signals.generation)
    }
  }

  /// Records what `answer` implies (versions, ETag, the back-off, signals that reached the
  /// server) and returns the fetch's result, or throws its error.
  private func record(
    _ answer: FirebaseFetchAnswer, signalsGeneration: Int
  ) throws -> ConfigFetchResult {
    let (version, etag): (Int?, String?)
    switch answer {
    case .failure(let error):
      throw error
    case .throttling(let status, let retryAfter):
      let now = Date()
      throw state.withLock {
        $0.throttle.throttled(status: status, retryAfter: retryAfter, at: now)
      }
    case .notModified(let answered, let tag), .template(_, let answered, let tag):
      (version, etag) = (answered, tag)
    }
    state.withLock { state in
      state.throttle.answered()
      state.signals.reachedServer(generation: signalsGeneration)
      if let version { state.knownVersion = max(state.knownVersion, version) }
      if let etag { state.lastETag = etag }
    }
    guard case .template(let entries, _, _) = answer else { return .notModified }
    return .modified(
      ConfigPayload(entries: entries, version: ConfigVersion(etag: etag, number: version)))
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
