import Foundation
import Tether
import TetherHTTP

/// An etcd cluster reached through its v3 JSON gateway: the endpoints, the credentials and the
/// limits every `.etcd` key and ``EtcdConfigSource`` using it share.
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
/// - `https` endpoints work like `http` ones (the system's trust store verifies them).
/// - Every request must complete within `timeout`: a paused or partitioned member makes
///   requests hang rather than fail, so nothing waits longer than that.
///
/// Share one cluster value between keys: it holds the connections.
public final class EtcdCluster: Sendable, CustomStringConvertible {
  /// The client URLs of the members, such as `http://127.0.0.1:2379`.
  public let endpoints: [URL]
  /// The user name for token authentication, if any.
  public let username: String?
  /// How long one request may take before the next endpoint is tried.
  public let timeout: Duration
  /// How long a watch may stay silent before it checks that its member still answers (and
  /// moves to another endpoint if not).
  public let watchCheckInterval: Duration

  private let password: String?
  let http: HTTPClient
  private let state = Lock(State())

  private struct State {
    var preferred = 0
    var token: String?
    var tokenIssued = ContinuousClock.now
  }

  /// Creates a cluster client.
  ///
  /// - Parameters:
  ///   - endpoints: The members' client URLs (at least one; `http` or `https`).
  ///   - username: A user for token authentication, with `password`.
  ///   - password: The user's password.
  ///   - timeout: Per request; default 5 s.
  ///   - watchCheckInterval: How long a silent watch waits before checking its member;
  ///     default 3 s.
  public init(
    endpoints: [URL], username: String? = nil, password: String? = nil,
    timeout: Duration = .seconds(5), watchCheckInterval: Duration = .seconds(3)
  ) {
    precondition(!endpoints.isEmpty, "EtcdCluster needs at least one endpoint")
    self.endpoints = endpoints
    self.username = username
    self.password = password
    self.timeout = timeout
    self.watchCheckInterval = watchCheckInterval
    // Plain `http` members are reached over Tether's socket transport: the gateway's error
    // answers carry HTTP trailers, and a member that dies closes connections mid-request,
    // both of which make URLSession on Linux end the process.
    http = HTTPClient(
      baseURL: endpoints[0], timeout: timeout, maximumResponseSize: 64 << 20,
      retryPolicy: .none, plainHTTPOverSockets: true)
  }

  /// The endpoints and the user, never the password.
  public var description: String {
    "EtcdCluster(\(endpoints.map(\.absoluteString).joined(separator: ", "))"
      + (username.map { ", user: \($0)" } ?? "") + ")"
  }

  // MARK: - Requests

  /// The endpoint requests go to first.
  var preferredEndpoint: Int { state.withLock { $0.preferred } }

  /// Posts `body` to `path` (such as `v3/kv/range`) and returns the answer's JSON.
  ///
  /// - Parameters:
  ///   - idempotent: Whether the request may be sent again after its answer was lost. When it
  ///     may not, a lost answer is ``EtcdError/outcomeUnknown(reason:)``; an endpoint that
  ///     refused the connection is skipped either way.
  ///   - endpoint: Only this endpoint (no fail-over), for checking one member.
  func call(
    _ path: String, _ body: Data, idempotent: Bool, endpoint: Int? = nil,
    timeout: Duration? = nil
  ) async throws(EtcdError) -> Data {
    let start = endpoint ?? preferredEndpoint
    let attempts = endpoint == nil ? endpoints.count : 1
    var lastFailure = "no endpoint"
    for attempt in 0..<attempts {
      let index = (start + attempt) % endpoints.count
      var reauthenticated = false
      while true {
        var request = HTTPRequest(
          method: .post, url: endpoints[index].appendingPathComponent(path),
          headers: ["Content-Type": "application/json"], body: body, timeout: timeout)
        if username != nil {
          request.setHeader("Authorization", try await token(refresh: false, endpoint: index))
        }
        let response: HTTPResponseMessage
        do {
          response = try await http.response(for: request)
        } catch {
          switch error {
          case .cancelled: throw .cancelled
          case .unreachable(_, let reason):
            lastFailure = "\(endpoints[index].absoluteString): \(reason)"
          default:
            lastFailure = "\(error)"
            guard idempotent else { throw .outcomeUnknown(reason: lastFailure) }
          }
          break
        }
        if response.status == 200 {
          if endpoint == nil { state.withLock { $0.preferred = index } }
          return response.body
        }
        let failure = Self.serverError(response)
        if case .server(401, 16, _) = failure, username != nil, !reauthenticated {
          // An expired token: authenticate again and repeat the request once.
          reauthenticated = true
          _ = try await token(refresh: true, endpoint: index)
          continue
        }
        guard case .server(let status, _, let message) = failure, status == 503 || status == 504
        else { throw failure }
        lastFailure = "\(endpoints[index].absoluteString): \(message)"
        // Without a leader nothing was proposed; any other unavailability may hide a commit.
        guard idempotent || message.contains("no leader") else {
          throw .outcomeUnknown(reason: lastFailure)
        }
        break
      }
    }
    throw .unavailable(reason: lastFailure)
  }

  /// The gateway's error body (`{"error", "message", "code"}`) as an ``EtcdError``.
  static func serverError(_ response: HTTPResponseMessage) -> EtcdError {
    let object = (try? EtcdWire.object(response.body)) ?? [:]
    let message =
      object["message"] as? String ?? object["error"] as? String
      ?? String(decoding: response.body.prefix(256), as: UTF8.self)
    let code = (object["code"] as? NSNumber)?.intValue ?? 0
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
    let body = EtcdWire.data(["name": username ?? "", "password": password ?? ""])
    var request = HTTPRequest(
      method: .post, url: endpoints[endpoint].appendingPathComponent("v3/auth/authenticate"),
      headers: ["Content-Type": "application/json"], body: body)
    request.timeout = timeout
    let response: HTTPResponseMessage
    do {
      response = try await http.response(for: request)
    } catch {
      throw error == .cancelled ? .cancelled : .unavailable(reason: "\(error)")
    }
    guard response.status == 200 else { throw Self.serverError(response) }
    guard let token = try EtcdWire.object(response.body)["token"] as? String else {
      throw .invalidResponse("authenticate returned no token")
    }
    state.withLock { state in
      state.token = token
      state.tokenIssued = .now
    }
    return token
  }
}
