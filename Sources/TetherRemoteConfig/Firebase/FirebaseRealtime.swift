import Foundation
import TetherHTTP

/// How a ``FirebaseConfigSource`` keeps its realtime connection.
///
/// The defaults are the official SDKs' schedule: after a failed connection the source waits
/// minutes, not seconds, so that a fleet does not hammer Firebase during an outage (polling
/// keeps the config fresh meanwhile).
///
/// ```swift
/// let source = FirebaseConfigSource(..., realtime: FirebaseRealtimeSettings())
/// ```
public struct FirebaseRealtimeSettings: Sendable, Hashable {
  /// The wait, in seconds, before reconnecting after the first failed connection; it doubles
  /// with each further failure (randomized between half and all of it). Default 120, as the
  /// SDKs. A stream that was open and then ended reconnects at once; a successful connection
  /// resets the count.
  public var initialBackoff: TimeInterval
  /// The longest wait, in seconds, between reconnections. Default 3600. The source never stops
  /// reconnecting after a failure it may retry (408, 429, 502, 503, 504, a network failure or a
  /// dropped stream); any other status stops realtime (``FirebaseRealtimeState/stopped(_:)``).
  public var maximumBackoff: TimeInterval

  /// The wait before each fetch that follows an announcement (the backend may still serve
  /// the old template for a moment): random between half a second and 3 s, as the SDKs'
  /// random delay of up to a few seconds. Package-visible so that tests and benchmarks can
  /// shorten it.
  package var announcementFetchDelay = Backoff(
    initial: .seconds(3), maximum: .seconds(3), multiplier: 1, minimum: .milliseconds(500),
    jitter: .full)

  /// How many fetches an announcement starts at most, as the SDKs.
  package static let announcementFetchAttempts = 3

  /// Creates settings.
  public init(initialBackoff: TimeInterval = 120, maximumBackoff: TimeInterval = 3600) {
    self.initialBackoff = max(0.001, initialBackoff)
    self.maximumBackoff = max(self.initialBackoff, maximumBackoff)
  }

  /// The back-off after failed connections.
  package var reconnectionBackoff: Backoff {
    Backoff(
      initial: .milliseconds(Int64(min(initialBackoff, 1e9) * 1000)),
      maximum: .milliseconds(Int64(min(maximumBackoff, 1e9) * 1000)), jitter: .equal)
  }
}

/// Where a ``FirebaseConfigSource``'s realtime connection stands.
///
/// Observe it with ``FirebaseConfigSource/realtimeState`` and
/// ``FirebaseConfigSource/realtimeStatePublisher``. While it is not ``connected``, changes
/// arrive only by polling (``RemoteConfig/startPolling(every:)``), which keeps running.
public enum FirebaseRealtimeState: Sendable, Equatable {
  /// Realtime is not enabled, or no ``RemoteConfig`` watches the source (yet, or any more).
  case off
  /// Opening the stream.
  case connecting
  /// The stream is open; template changes are fetched as soon as the server announces them.
  case connected
  /// The stream failed or ended; the source reconnects at `until`. `failures` counts the
  /// consecutive failed connections; `reason` is the last one, when there was an error.
  case waitingToReconnect(until: Date, failures: Int, reason: RemoteConfigError?)
  /// The server answered `featureDisabled`: realtime is off for this project until the source
  /// is configured again. Polling continues.
  case disabled
  /// The server refused the stream with a status that cannot be retried (400, 403 — the
  /// Realtime API is disabled or the API key is restricted —, 404, or 401 after a new token):
  /// realtime stays off until the source is configured again, as the SDKs do. Polling
  /// continues.
  case stopped(RemoteConfigError)
}

/// A ``FirebaseConfigSource`` input that cannot be used.
public enum FirebaseConfigSourceError: Error, Equatable, CustomStringConvertible {
  /// A custom signal breaks one of Firebase's limits (a key of 1 to 250 characters, a string
  /// or number value of at most 500 characters, at most 100 signals).
  case invalidCustomSignal(key: String, reason: String)
  /// Firebase answered HTTP 200 with an error object (`{"error": {"code", "message",
  /// "status"}}`) instead of a template: a failed fetch, as the SDKs treat it. It reaches a
  /// ``RemoteConfig`` as ``RemoteConfigError/source(_:)``; the active values are unchanged.
  case serviceError(code: Int?, status: String?, message: String?)

  /// A sentence saying what is wrong.
  public var description: String {
    switch self {
    case .invalidCustomSignal(let key, let reason):
      "custom signal \(key.debugDescription) is invalid: \(reason)"
    case .serviceError(let code, let status, let message):
      "Firebase answered with an error"
        + [code.map { " \($0)" }, status.map { " \($0)" }, message.map { ": \($0)" }]
        .compactMap { $0 }.joined()
    }
  }
}
