import Foundation

/// How a ``RemoteConfig`` fetches.
public struct RemoteConfigSettings: Sendable, Hashable {
  /// The fetch expiration duration: a `fetch()` within this many seconds of the last
  /// successful one returns without touching the network. Default 12 hours, as in Firebase.
  /// Polling and source change notifications ignore it.
  public var minimumFetchInterval: TimeInterval
  /// How long one fetch may take, in seconds, before it fails with
  /// ``RemoteConfigError/timedOut(after:)``. Default 60.
  public var fetchTimeout: TimeInterval
  /// The longest wait, in seconds, between polls while the source keeps failing. Default 600.
  public var maximumBackoff: TimeInterval
  /// Whether the backoff after a failure is randomized ("full jitter", so many clients do not
  /// retry in step). Default `true`; `false` doubles the wait exactly, which makes timings
  /// predictable in tests.
  public var backoffJitter: Bool

  /// Creates settings.
  public init(
    minimumFetchInterval: TimeInterval = 12 * 60 * 60, fetchTimeout: TimeInterval = 60,
    maximumBackoff: TimeInterval = 600, backoffJitter: Bool = true
  ) {
    self.minimumFetchInterval = minimumFetchInterval
    self.fetchTimeout = fetchTimeout
    self.maximumBackoff = maximumBackoff
    self.backoffJitter = backoffJitter
  }
}

/// The outcome of the most recent fetch.
public enum RemoteConfigFetchStatus: String, Sendable, Hashable {
  /// No fetch has been made since this ``RemoteConfig`` started, and no cache was read.
  case noFetchYet
  /// No fetch has been made since this ``RemoteConfig`` started; the active values come from
  /// the on-disk cache, fetched at ``RemoteConfig/lastFetchTime``. ``RemoteConfig/nextFetchDate``
  /// says when `fetch()` goes to the source again.
  case cached
  /// The last fetch reached the source: new values are ready to activate, or nothing changed.
  case success
  /// The last fetch failed; ``RemoteConfig/lastError`` says why.
  case failure
  /// The source asked the client to slow down (HTTP 429, or a `Retry-After`), or the client is
  /// still waiting out such a request; ``RemoteConfig/lastError`` says how long.
  case throttled
}

/// The keys an activation changed.
public struct ConfigUpdate: Sendable, Hashable {
  /// The names of the entries that were added, removed or changed.
  public var updatedKeys: Set<String>

  /// Creates an update.
  public init(updatedKeys: Set<String>) {
    self.updatedKeys = updatedKeys
  }
}
