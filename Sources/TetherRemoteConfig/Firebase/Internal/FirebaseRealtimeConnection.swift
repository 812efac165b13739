import Foundation
import Tether
import TetherHTTP

/// The realtime stream of one ``FirebaseConfigSource``: `streamFetchInvalidations`, kept open
/// and reopened with back-off for as long as a ``RemoteConfig`` watches the source.
///
/// Each `latestTemplateVersionNumber` newer than the config's version calls `onChange`, which
/// makes the config fetch (the source then fetches until that version arrives) and activate.
/// `featureDisabled` ends realtime (state ``FirebaseRealtimeState/disabled``);
/// `retryIntervalSeconds` sets the least wait before the next connection. Unlike the official
/// SDKs, it never gives up after a number of failures: it keeps reconnecting (at most
/// ``FirebaseRealtimeSettings/maximumBackoff`` apart) and says so in the state.
final class FirebaseRealtimeConnection: Sendable {
  private let source: FirebaseConfigSource
  private let settings: FirebaseRealtimeSettings
  private let onChange: @Sendable () -> Void
  private let task = Lock<Task<Void, Never>?>(nil)
  private let client: HTTPClient

  init(
    source: FirebaseConfigSource, settings: FirebaseRealtimeSettings,
    onChange: @escaping @Sendable () -> Void
  ) {
    self.source = source
    self.settings = settings
    self.onChange = onChange
    client = HTTPClient(
      baseURL: source.endpoints.realtime, headers: [:],
      sensitiveHeaders: ["x-goog-api-key", "x-goog-firebase-installations-auth"],
      timeout: .seconds(30), maximumResponseSize: 64 << 10, retryPolicy: .none)
  }

  func start() {
    let running = Task { await self.run() }
    task.withLock { $0 = running }
  }

  func cancel() {
    task.withLock { $0 }?.cancel()
  }

  private func run() async {
    await source.pendingAttach.withLock { $0 }?.value
    var failures = 0
    var retryInterval: Double = 0
    while !Task.isCancelled {
      source.setRealtimeState(.connecting)
      var reason: RemoteConfigError?
      do {
        if try await connectAndListen(failures: &failures, retryInterval: &retryInterval) {
          source.setRealtimeState(.disabled)
          return
        }
      } catch is CancellationError {
        return
      } catch let error as RemoteConfigError {
        reason = error
      } catch {
        reason = RemoteConfigError(error)
      }
      if Task.isCancelled { return }
      failures += 1
      let backoff = Backoff(
        initial: .milliseconds(Int64(min(settings.initialBackoff, 1e9) * 1000)),
        maximum: .milliseconds(Int64(min(settings.maximumBackoff, 1e9) * 1000)),
        jitter: .equal)
      let ceiling = backoff.delay(afterFailures: failures) ?? backoff.maximum
      let wait = max(
        retryInterval,
        Double(ceiling.components.seconds) + Double(ceiling.components.attoseconds) / 1e18)
      source.setRealtimeState(
        .waitingToReconnect(
          until: Date().addingTimeInterval(wait), failures: failures, reason: reason))
      do {
        try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
      } catch {
        return
      }
    }
  }

  /// Opens the stream and reads it until it ends; resets `failures` once it is open and sets
  /// `retryInterval` when the server sends one (kept even when the stream then drops).
  ///
  /// - Returns: `true` when the server disabled realtime.
  private func connectAndListen(
    failures: inout Int, retryInterval: inout Double
  ) async throws -> Bool {
    var installation = try await source.installations.installation()
    var response = try await open(installation)
    if response.status == 401 || response.status == 403 {
      installation = try await source.installations.installation(
        rejecting: installation.authToken)
      response = try await open(installation)
    }
    guard response.status == 200 else {
      throw FirebaseConfigSource.error(status: response.status, retryAfter: nil)
    }
    failures = 0
    source.setRealtimeState(.connected)
    var parser = RealtimeMessageParser()
    do {
      for try await chunk in response.body {
        for message in parser.feed(chunk) {
          if message["featureDisabled"] == .bool(true) { return true }
          if let seconds = Self.number(message["retryIntervalSeconds"]) {
            retryInterval = min(max(0, seconds), 24 * 60 * 60)
          }
          if let version = Self.number(message["latestTemplateVersionNumber"]),
            version.isFinite, version >= 0, version < 1e15,
            source.announce(version: Int(version))
          {
            onChange()
          }
        }
      }
    } catch {
      if Task.isCancelled { throw CancellationError() }
      throw RemoteConfigError.connectionFailed("the realtime stream dropped: \(error)")
    }
    return false
  }

  private func open(_ installation: FirebaseInstallation) async throws -> HTTPStreamingResponse {
    let (version, etag) = source.realtimeBasis
    let body: JSONValue = .object([
      "project": .string(Self.projectNumber(appID: source.appID) ?? source.projectID),
      "namespace": .string(source.namespace),
      "lastKnownVersionNumber": .string(String(version)),
      "appId": .string(source.appID),
      "sdkVersion": .string(FirebaseConfigSource.sdkVersion),
      "appInstanceId": .string(installation.fid),
    ])
    let url = FirebaseEndpoints.url(
      source.endpoints.realtime,
      "/v1/projects/\(FirebaseEndpoints.escape(source.projectID))/namespaces/"
        + "\(FirebaseEndpoints.escape(source.namespace)):streamFetchInvalidations",
      query: [("key", source.apiKey)])
    var request = HTTPRequest(method: .post, url: url, body: body.jsonData())
    request.setHeader("Content-Type", "application/json")
    request.setHeader("Accept", "application/json")
    // As the Android SDK sends them: the answer is streamed, and the front end may retry.
    request.setHeader("X-Accept-Response-Streaming", "true")
    request.setHeader("X-Google-GFE-Can-Retry", "yes")
    request.setHeader("X-Goog-Api-Key", source.apiKey)
    request.setHeader("X-Goog-Firebase-Installations-Auth", installation.authToken)
    request.setHeader("If-None-Match", etag ?? "*")
    do {
      return try await client.streamingResponse(for: request)
    } catch .cancelled {
      throw CancellationError()
    } catch {
      throw RemoteConfigError(http: error, timeout: 30)
    }
  }

  /// The project number in an app ID such as `1:1234567890:web:abc123`.
  static func projectNumber(appID: String) -> String? {
    let parts = appID.split(separator: ":")
    guard parts.count >= 3, parts[1].allSatisfy(\.isNumber) else { return nil }
    return String(parts[1])
  }

  private static func number(_ value: JSONValue?) -> Double? {
    switch value {
    case .int(let number)?: Double(number)
    case .double(let number)?: number.isFinite ? number : nil
    case .string(let text)?: Double(text).flatMap { $0.isFinite ? $0 : nil }
    default: nil
    }
  }
}

/// Cuts the realtime body into its JSON objects, as the SDKs do: the text from a `{` to the
/// next `}` (the server's messages are flat objects inside an endless array).
struct RealtimeMessageParser {
  /// A message larger than this is dropped, so a hostile stream cannot grow memory.
  static let limit = 64 << 10
  private var buffer = Data()

  mutating func feed(_ chunk: Data) -> [[String: JSONValue]] {
    buffer.append(chunk)
    var messages: [[String: JSONValue]] = []
    while let open = buffer.firstIndex(of: UInt8(ascii: "{")) {
      guard let close = buffer[open...].firstIndex(of: UInt8(ascii: "}")) else {
        buffer.removeSubrange(buffer.startIndex..<open)
        if buffer.count > Self.limit { buffer.removeAll() }
        return messages
      }
      if case .object(let object)? = try? JSONValue(parsing: Data(buffer[open...close])) {
        messages.append(object)
      }
      buffer.removeSubrange(buffer.startIndex...close)
    }
    // No `{` left: what remains is separators (`[`, `,`, white space).
    buffer.removeAll()
    return messages
  }
}
