import Foundation

/// How a ``FirebaseConfigSource`` keeps its realtime connection.
///
/// ```swift
/// let source = FirebaseConfigSource(..., realtime: FirebaseRealtimeSettings())
/// ```
public struct FirebaseRealtimeSettings: Sendable, Hashable {
  /// The wait, in seconds, before the first reconnection after the stream fails or ends; it
  /// doubles with each further failure (randomized between half and all of it). Default 1.
  public var initialBackoff: TimeInterval
  /// The longest wait, in seconds, between reconnections. Default 300. The source never stops
  /// reconnecting (unless the server answers `featureDisabled`).
  public var maximumBackoff: TimeInterval

  /// Creates settings.
  public init(initialBackoff: TimeInterval = 1, maximumBackoff: TimeInterval = 300) {
    self.initialBackoff = max(0.001, initialBackoff)
    self.maximumBackoff = max(self.initialBackoff, maximumBackoff)
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
  /// consecutive failures; `reason` is the last one, when there was an error.
  case waitingToReconnect(until: Date, failures: Int, reason: RemoteConfigError?)
  /// The server answered `featureDisabled`: realtime is off for this project until the source
  /// is configured again. Polling continues.
  case disabled
}

/// A ``FirebaseConfigSource`` input that cannot be used.
public enum FirebaseConfigSourceError: Error, Equatable, CustomStringConvertible {
  /// A custom signal breaks one of Firebase's limits (a key of 1 to 250 characters, a string
  /// or number value of at most 500 characters, at most 100 signals).
  case invalidCustomSignal(key: String, reason: String)

  /// A sentence saying what is wrong.
  public var description: String {
    switch self {
    case .invalidCustomSignal(let key, let reason):
      "custom signal \(key.debugDescription) is invalid: \(reason)"
    }
  }
}
