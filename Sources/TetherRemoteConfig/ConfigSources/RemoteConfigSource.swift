import Foundation
import Streams

/// Where a ``RemoteConfig`` fetches its entries from.
///
/// Tether ships ``HTTPConfigSource`` and ``FileConfigSource``. To read config from anywhere
/// else (a database, a key-value store, another service's SDK), conform a type to this
/// protocol: return the entries with a version, or `.notModified` when
/// `request.previousVersion` is still current, and throw ``RemoteConfigError`` cases for
/// failures so that status, backoff and polling behave as for the built-in sources.
///
/// ```swift
/// struct EnvironmentConfigSource: RemoteConfigSource {
///   func fetch(_ request: ConfigFetchRequest) async throws -> ConfigFetchResult {
///     let entries = ProcessInfo.processInfo.environment
///       .filter { $0.key.hasPrefix("APP_") }
///       .mapValues { JSONValue.string($0) }
///     let version = ConfigVersion(etag: String(entries.hashValue))
///     if version.etag == request.previousVersion?.etag { return .notModified }
///     return .modified(ConfigPayload(entries: entries, version: version))
///   }
/// }
/// ```
public protocol RemoteConfigSource: Sendable {
  /// Fetches the current entries.
  ///
  /// Called from any task, never concurrently for one ``RemoteConfig``. Honour
  /// `request.timeout`, and stop early when the task is cancelled.
  ///
  /// - Returns: `.notModified` when `request.previousVersion` is still current, otherwise
  ///   the entries and their version.
  /// - Throws: Preferably a ``RemoteConfigError``; other errors are reported as
  ///   ``RemoteConfigError/source(_:)``.
  func fetch(_ request: ConfigFetchRequest) async throws -> ConfigFetchResult

  /// Starts watching for changes the source can notice by itself (a file watcher, a push
  /// channel), calling `onChange` for each; the ``RemoteConfig`` then fetches and activates.
  ///
  /// The default returns `nil`: the source has no change notifications and is polled.
  ///
  /// - Returns: A cancellable that stops watching, or `nil` if the source cannot watch.
  func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> AnyCancellable?
}

extension RemoteConfigSource {
  /// A source without change notifications.
  public func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> AnyCancellable? {
    nil
  }
}

/// What a ``RemoteConfigSource`` is asked to fetch.
public struct ConfigFetchRequest: Sendable {
  /// The version of the newest entries the config already has (fetched or active), for a
  /// conditional request; `nil` on the first fetch.
  public var previousVersion: ConfigVersion?
  /// How long the fetch may take, in seconds.
  public var timeout: TimeInterval

  /// Creates a request.
  public init(previousVersion: ConfigVersion?, timeout: TimeInterval) {
    self.previousVersion = previousVersion
    self.timeout = timeout
  }
}

/// The answer of a ``RemoteConfigSource``.
public enum ConfigFetchResult: Sendable {
  /// The entries have not changed since `previousVersion`.
  case notModified
  /// The current entries.
  case modified(ConfigPayload)
}

/// A complete set of config entries and their version.
public struct ConfigPayload: Sendable, Hashable {
  /// The entries by name.
  public var entries: [String: JSONValue]
  /// The entries' version.
  public var version: ConfigVersion
  /// How a flag service evaluated entries (variant, reason), by entry name; empty for plain
  /// documents. ``ConfigValue/evaluation`` exposes it.
  public var evaluations: [String: ConfigEvaluation]

  /// Creates a payload.
  public init(
    entries: [String: JSONValue], version: ConfigVersion = ConfigVersion(),
    evaluations: [String: ConfigEvaluation] = [:]
  ) {
    self.entries = entries
    self.version = version
    self.evaluations = evaluations
  }
}

/// Identifies one version of a config document, for conditional fetches and for ordering.
///
/// A payload whose version is older than the active one is never applied: versions are
/// compared by ``number`` when both have one, otherwise by ``updatedAt`` when both have one;
/// versions that cannot be compared are taken as newer.
public struct ConfigVersion: Sendable, Hashable, Codable {
  /// An opaque validator, such as an HTTP `ETag`.
  public var etag: String?
  /// The HTTP `Last-Modified` header as the server sent it, echoed in `If-Modified-Since`.
  public var lastModified: String?
  /// When the document was last changed, if the source knows.
  public var updatedAt: Date?
  /// A number that grows with every change of the document, if the source has one
  /// (``HTTPConfigSource`` reads the `X-Config-Version` header).
  public var number: Int?

  /// Creates a version.
  public init(
    etag: String? = nil, lastModified: String? = nil, updatedAt: Date? = nil, number: Int? = nil
  ) {
    self.etag = etag
    self.lastModified = lastModified
    self.updatedAt = updatedAt
    self.number = number
  }

  /// Whether this version is known to be older than `other`.
  public func isOlder(than other: ConfigVersion) -> Bool {
    if let number, let otherNumber = other.number { return number < otherNumber }
    if let updatedAt, let otherDate = other.updatedAt { return updatedAt < otherDate }
    return false
  }
}
