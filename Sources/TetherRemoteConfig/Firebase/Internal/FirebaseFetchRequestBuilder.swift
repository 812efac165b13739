import Foundation
import TetherHTTP

/// Builds a ``FirebaseConfigSource``'s fetch request, as a value: the body the SDKs send and
/// the headers, with no I/O.
///
/// A poll of an unchanged installation repeats the last request, so the builder keeps it: the
/// body is encoded again only when the installation's FID or auth token or the signals'
/// generation changed, and the request is built again only when its token, ETag, fetch type,
/// timeout or body did. Building the headers is most of a 304's own cost.
package struct FirebaseFetchRequestBuilder: Sendable {
  /// The fetch endpoint with its escaped path and API key: the same for every fetch.
  package let url: URL
  /// The app ID, sent as `app_id`.
  package let appID: String
  /// The app metadata sent with every fetch.
  package let app: FirebaseAppInfo
  /// The `sdk_version` sent.
  package let sdkVersion: String

  /// The last body and what it was built from.
  private var lastBody: (fid: String, authToken: String, generation: Int, data: Data)?
  /// The last request and what it was built from.
  private var lastRequest: LastRequest?
  /// How many bodies were encoded: each one not taken from the cache.
  package private(set) var bodiesEncoded = 0
  /// How many requests were built: each one not taken from the cache.
  package private(set) var requestsBuilt = 0

  private struct LastRequest: Sendable {
    var authToken: String
    var etag: String?
    var type: String
    var timeout: TimeInterval
    var body: Data
    var request: HTTPRequest
  }

  /// A builder for the fetch of `namespace` in `projectID` at `root`, with `apiKey` in the
  /// query as the web SDK sends it.
  package init(
    root: URL, apiKey: String, projectID: String, namespace: String, appID: String,
    app: FirebaseAppInfo, sdkVersion: String
  ) {
    url = FirebaseEndpoints.url(
      root,
      "/v1/projects/\(FirebaseEndpoints.escape(projectID))/namespaces/"
        + "\(FirebaseEndpoints.escape(namespace)):fetch",
      query: [("key", apiKey)])
    self.appID = appID
    self.app = app
    self.sdkVersion = sdkVersion
  }

  /// The `X-Firebase-RC-Fetch-Type` of the `attempt`th fetch: `REALTIME/n` after a realtime
  /// announcement, `BASE/n` otherwise.
  package static func fetchType(realtime: Bool, attempt: Int) -> String {
    realtime ? "REALTIME/\(attempt)" : "BASE/\(attempt)"
  }

  /// The fetch request for the installation `fid` with `authToken` and `signals`, sending
  /// `etag` (`nil`: `*`), of `type`, that may take `timeout` seconds.
  package mutating func request(
    fid: String, authToken: String, signals: FirebaseCustomSignals, etag: String?,
    type: String, timeout: TimeInterval
  ) -> HTTPRequest {
    let body = body(fid: fid, authToken: authToken, signals: signals)
    return request(authToken: authToken, body: body, etag: etag, type: type, timeout: timeout)
  }

  /// The fetch body for the installation `fid` with `authToken` and `signals`, reused while
  /// all three stay the same.
  package mutating func body(
    fid: String, authToken: String, signals: FirebaseCustomSignals
  ) -> Data {
    if let last = lastBody, last.fid == fid, last.authToken == authToken,
      last.generation == signals.generation
    {
      return last.data
    }
    var fields = app.fetchFields
    fields["app_instance_id"] = .string(fid)
    fields["app_instance_id_token"] = .string(authToken)
    fields["app_id"] = .string(appID)
    fields["sdk_version"] = .string(sdkVersion)
    fields["custom_signals"] = signals.fetchField
    let data = JSONValue.object(fields).jsonData()
    bodiesEncoded += 1
    lastBody = (fid, authToken, signals.generation, data)
    return data
  }

  /// The request that sends `body`, reused while its inputs stay the same.
  package mutating func request(
    authToken: String, body: Data, etag: String?, type: String, timeout: TimeInterval
  ) -> HTTPRequest {
    if let last = lastRequest, last.authToken == authToken, last.etag == etag,
      last.type == type, last.timeout == timeout, last.body == body
    {
      return last.request
    }
    let request = HTTPRequest(
      method: .post, url: url,
      headers: [
        "Content-Type": "application/json",
        "If-None-Match": etag ?? "*",
        "X-Goog-Firebase-Installations-Auth": authToken,
        "X-Firebase-RC-Fetch-Type": type,
      ],
      body: body, timeout: .milliseconds(Int64(max(0.001, min(timeout, 86_400)) * 1000)))
    requestsBuilt += 1
    lastRequest = LastRequest(
      authToken: authToken, etag: etag, type: type, timeout: timeout, body: body,
      request: request)
    return request
  }
}
