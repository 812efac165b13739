import Foundation
import Streams
import Tether
import TetherHTTP
import TetherSupport

/// An etcd cluster reached through its v3 JSON gateway: the endpoints, the credentials and the
/// limits every `.etcd` key and `EtcdConfigSource` (TetherRemoteConfig) using it share.
///
/// ```swift
/// let cluster = EtcdCluster(endpoints: [
///   URL(string: "http://10.0.0.1:2379")!, URL(string: "http://10.0.0.2:2379")!,
/// ])
/// @Shared(.etcd("/app/maintenance", in: cluster)) var maintenance = false
/// ```
///
/// - Fail-over: a request goes to the endpoint that answered last; when it is unreachable,
///   times out or has no leader, the next endpoint is tried. A write whose answer was lost is
///   not resent blindly: the keys find out whether it was committed first.
/// - Authentication: with `username` and `password`, the client asks etcd for a token and
///   sends it raw in `Authorization` (as the gateway wants); an expired token is replaced and
///   the request repeated once. The password never appears in errors or descriptions.
/// - TLS: `https` endpoints are verified against the system's trust store plus
///   `trustedCertificates` (the cluster's own CA, as `--trusted-ca-file` names it on the
///   members); with `clientCertificate` and `clientKey` the client presents that identity to
///   members started with `--client-cert-auth`. A refused certificate (either way) is never a
///   crash and is not retried: the operation fails at once with
///   ``EtcdError/unavailable(reason:)-enum.case``, whose reason names the cause and whose
///   ``EtcdError/tlsRefusal`` says which.
///
///   ```swift
///   let cluster = EtcdCluster(
///     endpoints: [URL(string: "https://10.0.0.1:2379")!],
///     trustedCertificates: [caPEM], clientCertificate: clientPEM, clientKey: keyPEM)
///   ```
/// - Every operation completes within `timeout`, fail-over included: a paused or partitioned
///   member makes requests hang rather than fail, so one attempt on one member gives up after
///   `attemptTimeout` and the next endpoint is tried (a killed leader costs about a second,
///   not the whole `timeout`).
/// - Watches share streams: every `.etcd` key and `EtcdConfigSource` of one cluster value is
///   watched on one stream (one connection, one range watch over the span of their keys),
///   re-opened from each key's last seen revision + 1 when the set of keys changes. With
///   authentication, the role must be allowed to read that span. A watch that hears nothing for `watchCheckInterval` checks
///   its member (a linearizable read); a member that does not answer within `attemptTimeout`
///   sets `loadError` on the holders and the stream moves to the next endpoint. `loadError`
///   is cleared only once the new stream is proven current (its member answers a
///   linearizable read after every watch was created).
///
/// Share one cluster value between keys: it holds the connections and the shared watch stream.
public final class EtcdCluster: Sendable, CustomStringConvertible, CustomReflectable {
  /// The client URLs of the members, such as `http://127.0.0.1:2379`.
  public let endpoints: [URL]
  /// The user name for token authentication, if any.
  public let username: String?
  /// How long one operation may take in all, fail-over to other endpoints included.
  public let timeout: Duration
  /// How long one attempt on one member may take before the next endpoint is tried (with a
  /// single endpoint, an attempt may take the whole `timeout`).
  public let attemptTimeout: Duration
  /// How long a watch may stay silent before it checks that its member still answers (and
  /// moves to another endpoint if not).
  public let watchCheckInterval: Duration
  /// Certificate authorities (PEM) trusted for `https` members besides the system's.
  public let trustedCertificates: [String]

  private let password: String?
  let http: HTTPClient
  private let state = Lock(State())
  /// The one watch stream every key of this cluster value shares (created on first use).
  let watches: EtcdWatchHub

  private struct State {
    var preferred = 0
    var token: String?
    var tokenIssued = ContinuousClock.now
  }

  /// The back-off between rounds of fail-over within one operation.
  private static let roundBackoff = Backoff(initial: .milliseconds(50), maximum: .milliseconds(500))

  /// Creates a cluster client.
  ///
  /// - Parameters:
  ///   - endpoints: The members' client URLs (at least one; `http` or `https`).
  ///   - username: A user for token authentication, with `password`.
  ///   - password: The user's password.
  ///   - timeout: Per operation, fail-over included; default 5 s.
  ///   - attemptTimeout: Per attempt on one member; default 1 s (never more than `timeout`).
  ///   - watchCheckInterval: How long a silent watch waits before checking its member;
  ///     default 2 s.
  ///   - trustedCertificates: Certificate authorities in PEM trusted for `https` members,
  ///     besides the system's (etcd's `--trusted-ca-file`).
  ///   - clientCertificate: The client certificate in PEM (then any intermediates), presented
  ///     to members that require one (`--client-cert-auth`). Give `clientKey` with it: one
  ///     without the other fails every `https` request with a reason saying the key is missing.
  ///   - clientKey: The client certificate's private key in PEM, unencrypted or encrypted
  ///     (then give `clientKeyPassphrase`).
  ///   - clientKeyPassphrase: The passphrase of an encrypted `clientKey`. An encrypted key
  ///     without it fails every operation at once with a reason saying so: nothing prompts on
  ///     a terminal or waits for one.
  public init(
    endpoints: [URL], username: String? = nil, password: String? = nil,
    timeout: Duration = .seconds(5), attemptTimeout: Duration = .seconds(1),
    watchCheckInterval: Duration = .seconds(2), trustedCertificates: [String] = [],
    clientCertificate: String? = nil, clientKey: String? = nil,
    clientKeyPassphrase: String? = nil
  ) {
    precondition(!endpoints.isEmpty, "EtcdCluster needs at least one endpoint")
    self.endpoints = endpoints
    self.username = username
    self.password = password
    self.timeout = timeout
    self.attemptTimeout = min(attemptTimeout, timeout)
    self.watchCheckInterval = watchCheckInterval
    self.trustedCertificates = trustedCertificates
    let hasClientIdentity = clientCertificate != nil || clientKey != nil
    // Members are reached over Tether's engine, `https` ones too: the gateway's error answers
    // carry HTTP trailers, and a member that dies closes connections mid-request, both of
    // which make URLSession on Linux end the process.
    http = HTTPClient(
      baseURL: endpoints[0], timeout: timeout, maximumResponseSize: 64 << 20,
      retryPolicy: .none, trustedCertificates: trustedCertificates,
      clientCertificatePEM: hasClientIdentity ? clientCertificate ?? "" : nil,
      clientKeyPEM: hasClientIdentity ? clientKey ?? "" : nil,
      clientKeyPassphrase: clientKeyPassphrase, plainHTTPOverSockets: true)
    watches = EtcdWatchHub()
  }

  /// The endpoints and the user, never the password.
  public var description: String {
    "EtcdCluster(\(endpoints.map(\.absoluteString).joined(separator: ", "))"
      + (username.map { ", user: \($0)" } ?? "") + ")"
  }

  /// The endpoints, the user and the limits: `dump` and other mirror-based printing never
  /// show the password, the token or the client key.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "endpoints": endpoints, "username": username as Any, "timeout": timeout,
        "attemptTimeout": attemptTimeout, "watchCheckInterval": watchCheckInterval,
      ], displayStyle: .class)
  }

  // MARK: - Requests

  /// The endpoint requests go to first.
  var preferredEndpoint: Int { state.withLock { $0.preferred } }

  /// Posts `body` to `path` (such as `v3/kv/range`) and returns the answer's body.
  ///
  /// Endpoints are tried in turn, from the preferred one, each attempt bounded by
  /// `attemptTimeout`, in rounds (with a short back-off) until the operation's `timeout`
  /// runs out. An endpoint whose TLS refused the client (a certificate either way, an
  /// unusable client key) is not tried again: once every endpoint refused, the operation fails
  /// at once with ``EtcdError/unavailable(reason:)-enum.case`` naming the refusal.
  ///
  /// - Parameters:
  ///   - idempotent: Whether the request may be sent again after its answer was lost. When it
  ///     may not, a lost answer is ``EtcdError/outcomeUnknown(reason:)``; an endpoint that
  ///     refused the connection or answered "no leader" is skipped either way.
  ///   - endpoint: Only this endpoint (no fail-over), for checking one member.
  ///   - timeout: The whole operation's bound (default: the cluster's `timeout`).
  func call(
    _ path: String, _ body: Data, idempotent: Bool, endpoint: Int? = nil,
    timeout: Duration? = nil
  ) async throws(EtcdError) -> Data {
    let clock = ContinuousClock()
    let deadline = clock.now + (timeout ?? self.timeout)
    let candidates = endpoint.map { [$0] } ?? Array(endpoints.indices)
    var lastFailure: FailureReason = "no endpoint"
    // Endpoints whose TLS refused this client (a certificate either way, an unusable client
    // key): they refuse it again on every attempt, so they are not tried again.
    var refused: Set<Int> = []
    var round = 0
    while true {
      let start = endpoint == nil ? preferredEndpoint : 0
      for offset in candidates.indices {
        let index = candidates[(start + offset) % candidates.count]
        guard !refused.contains(index) else { continue }
        let remaining = deadline - clock.now
        guard remaining > .zero else { throw .unavailable(reason: lastFailure) }
        let limit = candidates.count > 1 ? min(attemptTimeout, remaining) : remaining
        switch try await attempt(path, body, idempotent: idempotent, endpoint: index, limit: limit)
        {
        case .answered(let data):
          if endpoint == nil { state.withLock { $0.preferred = index } }
          return data
        case .refused(let reason):
          refused.insert(index)
          lastFailure = FailureReason(
            "\(endpoints[index].absoluteString): \(reason)", tlsRefusal: reason.tlsRefusal)
          if endpoint == nil {
            state.withLock {
              if $0.preferred == index { $0.preferred = (index + 1) % endpoints.count }
            }
          }
        case .skipped(let reason):
          lastFailure = FailureReason("\(endpoints[index].absoluteString): \(reason)")
          // The next operation starts elsewhere too.
          if endpoint == nil {
            state.withLock {
              if $0.preferred == index { $0.preferred = (index + 1) % endpoints.count }
            }
          }
        }
      }
      if refused.count == candidates.count { throw .unavailable(reason: lastFailure) }
      round += 1
      let wait = Self.roundBackoff.delay(afterFailures: round) ?? .zero
      guard clock.now + wait < deadline else { throw .unavailable(reason: lastFailure) }
      do {
        try await Task.sleep(for: wait)
      } catch {
        throw .cancelled
      }
    }
  }

  private enum Attempt {
    case answered(Data)
    /// The endpoint failed in a way another attempt may not (unreachable, no leader).
    case skipped(String)
    /// The endpoint's TLS refused this client (the reason's `tlsRefusal` says how): every
    /// attempt would fail the same way.
    case refused(FailureReason)
  }

  /// One attempt on one endpoint (repeated once with a new token when the token expired).
  private func attempt(
    _ path: String, _ body: Data, idempotent: Bool, endpoint index: Int, limit: Duration
  ) async throws(EtcdError) -> Attempt {
    var reauthenticated = false
    while true {
      var request = HTTPRequest(
        method: .post, url: endpoints[index].appendingPathComponent(path),
        headers: ["Content-Type": "application/json"], body: body, timeout: limit)
      if username != nil {
        do throws(EtcdError) {
          request.setHeader("Authorization", try await token(refresh: false, endpoint: index))
        } catch {
          guard error.isTransient else { throw error }
          if case .unavailable(let reason) = error, reason.tlsRefusal != nil {
            return .refused(reason)
          }
          return .skipped("\(error)")
        }
      }
      let response: HTTPResponseMessage
      do {
        response = try await http.response(for: request)
      } catch {
        switch error {
        case .cancelled: throw .cancelled
        case .unreachable(_, let reason):
          return reason.tlsRefusal != nil ? .refused(reason) : .skipped(reason.description)
        default:
          guard idempotent else {
            throw .outcomeUnknown(reason: "\(endpoints[index].absoluteString): \(error)")
          }
          return .skipped("\(error)")
        }
      }
      if response.status == 200 { return .answered(response.body) }
      let failure = Self.serverError(response)
      if case .server(401, 16, _) = failure, username != nil, !reauthenticated {
        // An expired token: authenticate again and repeat the request once.
        reauthenticated = true
        _ = try await token(refresh: true, endpoint: index)
        continue
      }
      guard case .server(let status, _, let message) = failure, status == 503 || status == 504
      else { throw failure }
      // Without a leader nothing was proposed; any other unavailability may hide a commit.
      guard idempotent || message.contains("no leader") else {
        throw .outcomeUnknown(reason: "\(endpoints[index].absoluteString): \(message)")
      }
      return .skipped(message)
    }
  }

  /// The gateway's error body (`{"error", "message", "code"}`) as an ``EtcdError``.
  static func serverError(_ response: HTTPResponseMessage) -> EtcdError {
    let object = (try? EtcdWire.object(response.body)) ?? [:]
    let message =
      EtcdWire.string(object, "message") ?? EtcdWire.string(object, "error")
      ?? String(decoding: response.body.prefix(256), as: UTF8.self)
    let code = Int(EtcdWire.int64(object, "code"))
    if code == 3 && message.contains("authentication failed") || code == 7 {
      return .authenticationFailed(message: message)
    }
    return .server(status: response.status, code: code, message: message)
  }

  /// The auth token for requests to `endpoint` (watches attach it themselves).
  func currentToken(endpoint: Int) async throws(EtcdError) -> String {
    try await token(refresh: false, endpoint: endpoint)
  }

  /// Drops the token, so that the next request authenticates again.
  func forgetToken() { state.withLock { $0.token = nil } }

  /// The auth token, asking etcd for a new one when there is none or `refresh` is set.
  private func token(refresh: Bool, endpoint: Int) async throws(EtcdError) -> String {
    // Renewed before etcd's token TTL (5 minutes by default) runs out: an expired token is
    // answered with an error status, which is worth avoiding (see `call`).
    let cached = state.withLock { state in
      ContinuousClock.now - state.tokenIssued < .seconds(60) ? state.token : nil
    }
    if !refresh, let cached { return cached }
    let body = EtcdWire.data(["name": .string(username ?? ""), "password": .string(password ?? "")])
    var request = HTTPRequest(
      method: .post, url: endpoints[endpoint].appendingPathComponent("v3/auth/authenticate"),
      headers: ["Content-Type": "application/json"], body: body)
    request.timeout = attemptTimeout
    let response: HTTPResponseMessage
    do {
      response = try await http.response(for: request)
    } catch {
      if error == .cancelled { throw .cancelled }
      // The TLS reason alone, with its typed refusal, for `attempt` to tell a refusal that
      // repeats.
      if case .unreachable(_, let reason) = error, reason.tlsRefusal != nil {
        throw .unavailable(reason: reason)
      }
      throw .unavailable(reason: "\(error)")
    }
    guard response.status == 200 else { throw Self.serverError(response) }
    guard let token = EtcdWire.string(try EtcdWire.object(response.body), "token") else {
      throw .invalidResponse("authenticate returned no token")
    }
    state.withLock { state in
      state.token = token
      state.tokenIssued = .now
    }
    return token
  }
}
