import Dispatch
import Foundation
import Streams
import Synchronization
import Tether
import TetherSupport

/// A remote config client: fetches entries from a ``RemoteConfigSource``, activates them,
/// caches the active config on disk, and serves typed lookups.
///
/// The model is Firebase Remote Config's: fetched values become visible on ``activate()``;
/// ``fetchAndActivate()`` and polling do both.
///
/// ```swift
/// let config = RemoteConfig(
///   source: HTTPConfigSource(url: URL(string: "https://example.com/config.json")!),
///   cacheURL: cacheDirectory.appendingPathComponent("remote-config.json"))
/// try await config.fetchAndActivate()
/// let title = config[.welcomeTitle]
/// config.startPolling(every: .seconds(30))
/// ```
///
/// All members are safe to call from any thread. Lookups never wait for the network.
public final class RemoteConfig: Sendable {
  /// The process-wide instance. It has no source until ``configure(source:settings:cacheURL:)``.
  ///
  /// Made in the process scope whichever task first uses it, so an isolated scope (a test's)
  /// never takes it for a config of its own: there, its keys read a stand-in.
  public static let shared = withSharedStorage(.process) { RemoteConfig() }

  struct Active: Sendable {
    var entries: [String: JSONValue] = [:]
    var evaluations: [String: ConfigEvaluation] = [:]
    var version: ConfigVersion?
    var fetchTime: Date?
  }

  struct State: Sendable {
    var source: (any RemoteConfigSource)?
    var sourceWatch: AnyCancellable?
    var settings = RemoteConfigSettings()
    var cacheURL: URL?
    var active = Active()
    var fetched: (payload: ConfigPayload, time: Date)?
    var defaults: [String: JSONValue] = [:]
    var generation = 0
    /// Decoded values by `DecodedValueKey.slot`.
    var decoded: [AnyDecodedValue?] = []
    var decodeErrors: [DecodedValueKey: [ConfigDecodingError]] = [:]

    var lastFetchStatus = RemoteConfigFetchStatus.noFetchYet
    var lastFetchTime: Date?
    var lastError: RemoteConfigError?
    var staleFlag = false
    /// Counts activations that changed the active config, to order cache writes.
    var activationSerial = 0
    var inFlight: Task<Result<RemoteConfigFetchStatus, RemoteConfigError>, Never>?
    var sourceChanges = 0
    var sourceChangesAtFetchStart = 0
    var retryNotBefore: Date?
    var consecutiveFailures = 0
    var polling: Task<Void, Never>?
    /// Counts `startPolling` calls: a poll loop only ends the polling it belongs to.
    var pollingGeneration = 0

    /// The answer observers last heard (see `RemoteConfig+FirstAnswer.swift`).
    var announcedAnswer = FirstAnswer.ready
    var observers: [Int: ConfigObserver] = [:]
    var nextObserverID = 0
    var deliveries = DeliveryQueue<(targets: [ConfigObserver], event: ConfigEvent)>()
  }

  let state = Lock(State())
  /// Who delivers `deliveries` (see `OrderedDelivery`).
  let delivery = OrderedDelivery()
  /// Serializes cache writes; holds the serial number of the activation last written.
  let cacheWriter = Lock<Int>(0)
  let updateSubject = PassthroughSubject<ConfigUpdate, Never>()
  let decodeErrorSubject = PassthroughSubject<ConfigDecodingError, Never>()
  let fetchErrorSubject = PassthroughSubject<RemoteConfigError, Never>()

  /// Creates a config client.
  ///
  /// - Parameters:
  ///   - source: Where to fetch entries from; `nil` to configure it later.
  ///   - settings: Fetch interval, timeout and backoff.
  ///   - cacheURL: A file to keep the last activated config in. When it holds a cache, the
  ///     config starts from it (a restart without network keeps the last values); a corrupt
  ///     cache is moved aside and reported in ``lastError``.
  ///
  /// A config created in an isolated storage scope (a test's) is the one keys created there
  /// for it read; configs created elsewhere are replaced there by a stand-in that never
  /// reaches a network.
  public init(
    source: (any RemoteConfigSource)? = nil, settings: RemoteConfigSettings = .init(),
    cacheURL: URL? = nil
  ) {
    configure(source: source, settings: settings, cacheURL: cacheURL)
    useRealConfigInCurrentScope()
  }

  deinit {
    let (watch, polling) = state.withLock { ($0.sourceWatch, $0.polling) }
    watch?.cancel()
    polling?.cancel()
  }

  /// Replaces the source, the settings and the cache location.
  ///
  /// When the config has no active values yet and `cacheURL` holds a cache, the cached config
  /// becomes active. A source that notices changes itself (``FileConfigSource``) is watched
  /// from now on: each change is fetched and activated.
  public func configure(
    source: (any RemoteConfigSource)?, settings: RemoteConfigSettings = .init(),
    cacheURL: URL? = nil
  ) {
    let cached = cacheURL.map(ConfigCacheFile.read)
    (source as? any CacheAttachedSource)?.attach(cacheURL: cacheURL) { [weak self] in
      self?.isStale = true
    }
    let watch = source?.observeChanges { [weak self] in self?.sourceDidChange() }
    let previousWatch = state.withLock { state -> AnyCancellable? in
      let previous = state.sourceWatch
      state.source = source
      state.sourceWatch = watch
      state.settings = settings
      state.cacheURL = cacheURL
      switch cached {
      case .success(let cache?) where state.active.version == nil && state.active.entries.isEmpty:
        let changed = Set(cache.entries.keys)
        state.active = Active(
          entries: cache.entries, version: cache.version, fetchTime: cache.fetchTime)
        state.lastFetchTime = state.lastFetchTime ?? cache.fetchTime
        if state.lastFetchStatus == .noFetchYet { state.lastFetchStatus = .cached }
        invalidate(changed, in: &state)
        enqueue(.changed(changed, activation: true), in: &state)
      case .failure(let error):
        state.lastError = error
      default: break
      }
      noteAnswer(in: &state)
      return previous
    }
    previousWatch?.cancel()
    deliver()
  }

  // MARK: - Status

  /// The settings in use.
  public var settings: RemoteConfigSettings {
    get { state.withLock { $0.settings } }
    set { state.withLock { $0.settings = newValue } }
  }

  /// The outcome of the most recent fetch.
  public var lastFetchStatus: RemoteConfigFetchStatus { state.withLock { $0.lastFetchStatus } }

  /// When the last successful fetch (including "not modified") finished; restored from the
  /// cache at start.
  public var lastFetchTime: Date? { state.withLock { $0.lastFetchTime } }

  /// Why the most recent fetch, or reading the cache, failed; `nil` after a success.
  public var lastError: RemoteConfigError? { state.withLock { $0.lastError } }

  /// When ``fetch()`` goes to the source again: `nil` when the next fetch will (``isStale``),
  /// otherwise the end of ``RemoteConfigSettings/minimumFetchInterval`` after
  /// ``lastFetchTime``, or the end of the server's `Retry-After` wait.
  ///
  /// After a restart from the cache (status ``RemoteConfigFetchStatus/cached``) this is when
  /// the cached values may be replaced by `fetch()`; ``startPolling(every:)`` and setting
  /// ``isStale`` do not wait for it.
  public var nextFetchDate: Date? {
    state.withLock { state -> Date? in
      if let notBefore = state.retryNotBefore, notBefore > Date() { return notBefore }
      guard !isStale(state), let last = state.lastFetchTime else { return nil }
      return last.addingTimeInterval(state.settings.minimumFetchInterval)
    }
  }

  /// Whether the next ``fetch()`` will go to the source: `true` before the first successful
  /// fetch, after ``RemoteConfigSettings/minimumFetchInterval`` has passed, or after you set
  /// it. Set it to `true` to make the next fetch ignore the interval once.
  public var isStale: Bool {
    get { state.withLock { isStale($0) } }
    set { state.withLock { $0.staleFlag = newValue } }
  }

  /// Whether polling is running. It stops on ``stopPolling()`` and on 401/403.
  public var isPolling: Bool { state.withLock { $0.polling != nil } }

  private func isStale(_ state: State) -> Bool {
    guard !state.staleFlag, let last = state.lastFetchTime,
      state.lastFetchStatus != .failure, state.lastFetchStatus != .throttled
    else { return true }
    return Date().timeIntervalSince(last) >= state.settings.minimumFetchInterval
  }

  // MARK: - Fetch and activate

  /// Fetches the source's entries without making them visible; ``activate()`` does that.
  ///
  /// Within ``RemoteConfigSettings/minimumFetchInterval`` of the last successful fetch this
  /// returns `.success` without touching the network (unless ``isStale`` was set). Concurrent
  /// calls share one request. While the server's `Retry-After` has not passed, it fails again
  /// with the server's answer (status `.throttled`) without a request.
  ///
  /// - Returns: `.success`.
  /// - Throws: ``RemoteConfigError``; ``lastFetchStatus`` and ``lastError`` say the same.
  @discardableResult
  public func fetch() async throws(RemoteConfigError) -> RemoteConfigFetchStatus {
    try await fetch(ignoringInterval: false).get()
  }

  /// Makes the last fetched entries visible, emits a ``ConfigUpdate`` naming the keys that
  /// changed, and writes the cache.
  ///
  /// A fetched payload older than the active one is dropped.
  ///
  /// - Returns: Whether any entry changed.
  @discardableResult
  public func activate() async -> Bool {
    let (changed, cache) = state.withLock { state -> (Set<String>, (URL, Int)?) in
      defer { noteAnswer(in: &state) }
      guard let fetched = state.fetched else { return ([], nil) }
      state.fetched = nil
      if let version = state.active.version, fetched.payload.version.isOlder(than: version) {
        return ([], nil)
      }
      let old = state.active.entries
      let oldVersion = state.active.version
      let new = fetched.payload.entries
      var changed = Set<String>()
      for (name, value) in new where old[name] != value { changed.insert(name) }
      for name in old.keys where new[name] == nil { changed.insert(name) }
      state.active = Active(
        entries: new, evaluations: fetched.payload.evaluations,
        version: fetched.payload.version, fetchTime: fetched.time)
      if !changed.isEmpty {
        invalidate(changed, in: &state)
        enqueue(.changed(changed, activation: true), in: &state)
      }
      // The cache already holds this exact config: skip the write.
      if changed.isEmpty, oldVersion == fetched.payload.version { return (changed, nil) }
      state.activationSerial += 1
      return (changed, state.cacheURL.map { ($0, state.activationSerial) })
    }
    if let (url, serial) = cache { writeCache(to: url, serial: serial) }
    deliver()
    return !changed.isEmpty
  }

  /// Fetches, then activates what was fetched.
  ///
  /// - Returns: Whether any entry changed.
  /// - Throws: ``RemoteConfigError`` when the fetch failed; nothing is activated then.
  @discardableResult
  public func fetchAndActivate() async throws(RemoteConfigError) -> Bool {
    try await fetch()
    return await activate()
  }

  func fetch(ignoringInterval: Bool) async -> Result<RemoteConfigFetchStatus, RemoteConfigError> {
    enum Plan {
      case done(Result<RemoteConfigFetchStatus, RemoteConfigError>)
      case wait(Task<Result<RemoteConfigFetchStatus, RemoteConfigError>, Never>)
    }
    let plan = state.withLock { state -> Plan in
      if let inFlight = state.inFlight { return .wait(inFlight) }
      guard let source = state.source else { return .done(.failure(.notConfigured)) }
      if !ignoringInterval, !isStale(state) { return .done(.success(.success)) }
      if let notBefore = state.retryNotBefore, notBefore > Date() {
        // Still inside the server's Retry-After: report the server's answer again.
        let error =
          state.lastError
          ?? .throttled(status: 429, retryAfter: notBefore.timeIntervalSinceNow.rounded(.up))
        state.lastFetchStatus = .throttled
        state.lastError = error
        noteAnswer(in: &state)
        return .done(.failure(error))
      }
      state.staleFlag = false
      state.sourceChangesAtFetchStart = state.sourceChanges
      let request = ConfigFetchRequest(
        previousVersion: state.fetched?.payload.version ?? state.active.version,
        timeout: state.settings.fetchTimeout)
      let task = Task { await self.perform(request, with: source) }
      state.inFlight = task
      return .wait(task)
    }
    switch plan {
    case .done(let result):
      deliver()
      return result
    case .wait(let task): return await task.value
    }
  }

  private func perform(
    _ request: ConfigFetchRequest, with source: any RemoteConfigSource
  ) async -> Result<RemoteConfigFetchStatus, RemoteConfigError> {
    let result: Result<ConfigFetchResult, RemoteConfigError>
    do {
      result = .success(try await source.fetch(request))
    } catch {
      result = .failure(RemoteConfigError(error))
    }
    let outcome = record(result, at: Date())
    deliver()
    if case .failure(let error) = outcome { fetchErrorSubject.send(error) }
    return outcome
  }

  /// Records a fetch's result in the state: status, time, error, back-off, fetched payload.
  private func record(
    _ result: Result<ConfigFetchResult, RemoteConfigError>, at now: Date
  ) -> Result<RemoteConfigFetchStatus, RemoteConfigError> {
    state.withLock { state in
      state.inFlight = nil
      defer { noteAnswer(in: &state) }
      switch result {
      case .success(let answer):
        state.lastFetchStatus = .success
        state.lastFetchTime = now
        state.lastError = nil
        state.consecutiveFailures = 0
        state.retryNotBefore = nil
        if case .modified(let payload) = answer {
          let newest = state.fetched?.payload.version ?? state.active.version
          if newest.map({ !payload.version.isOlder(than: $0) }) ?? true {
            state.fetched = (payload, now)
          }
        }
        return .success(.success)
      case .failure(let error):
        state.lastFetchStatus = error.isThrottling ? .throttled : .failure
        state.lastError = error
        state.consecutiveFailures += 1
        if let retryAfter = error.retryAfter {
          state.retryNotBefore = now.addingTimeInterval(
            min(retryAfter, state.settings.maximumBackoff))
        }
        return .failure(error)
      }
    }
  }

  /// Writes the active config to the cache unless a later activation already did: concurrent
  /// activations cannot leave an older config on disk.
  private func writeCache(to url: URL, serial: Int) {
    let failure = cacheWriter.withLock { written -> RemoteConfigError? in
      // Lock order: cacheWriter, then state; never the other way round.
      let (active, latest) = state.withLock { ($0.active, $0.activationSerial) }
      guard latest > written, serial > written else { return nil }
      do {
        try ConfigCacheFile.write(
          CachedConfig(
            entries: active.entries, version: active.version ?? ConfigVersion(),
            fetchTime: active.fetchTime),
          to: url)
        written = latest
        return nil
      } catch {
        return .cacheWriteFailed("\(error)")
      }
    }
    if let failure { state.withLock { $0.lastError = failure } }
  }

  // MARK: - Source change notifications

  private func sourceDidChange() {
    let change = state.withLock { state in
      state.sourceChanges += 1
      return state.sourceChanges
    }
    Task {
      // A change that arrived while a fetch was already running may not be in it, so fetch
      // once more unless the fetch that just ran started after the change.
      for _ in 0..<2 {
        _ = await self.fetch(ignoringInterval: true)
        await self.activate()
        if self.state.withLock({ $0.sourceChangesAtFetchStart >= change }) { return }
      }
    }
  }
}
