import Foundation
import TetherHTTP

/// A config source that speaks the OpenFeature Remote Evaluation Protocol (OFREP), so any
/// OFREP flag service (flagd, GO Feature Flag, Flipt, …) backs a ``RemoteConfig``.
///
/// ```swift
/// let source = OFREPConfigSource(
///   baseURL: URL(string: "https://flags.example.com")!,
///   context: ["targetingKey": .string("user-42"), "plan": .string("pro")],
///   headers: ["Authorization": "Bearer …"])
/// let config = RemoteConfig(source: source, cacheURL: cacheURL)
/// config.startPolling(every: .seconds(30))
/// let checkout = config[.newCheckout]                         // the flag's value
/// config.configValue(forKey: "new_checkout").variant          // "on"
/// config.configValue(forKey: "new_checkout").reason           // "TARGETING_MATCH"
/// ```
///
/// - Each fetch is one bulk evaluation, `POST /ofrep/v1/evaluate/flags` with
///   `{"context": …}`; with the last `ETag` in `If-None-Match`, an unchanged evaluation is a
///   304 and costs no decoding.
/// - Every successfully evaluated flag becomes an entry with its value; its variant, reason
///   and metadata are in ``ConfigValue/evaluation``. A flag the service could not evaluate
///   (an `errorCode` in the response) has no entry, so lookups use the default; its
///   evaluation (reason `ERROR`, the `errorCode` and `errorDetails`) is still on the value that
///   `configValue(forKey:)` and `configValue(for:)` return:
///
///   ```swift
///   let rollout = config.configValue(for: .rolloutPercent)
///   rollout.source                   // .default
///   rollout.evaluation?.errorCode    // "TARGETING_KEY_MISSING"
///   rollout.evaluation?.errorDetails // the service's explanation
///   ```
/// - 400 (a bulk evaluation failure such as `INVALID_CONTEXT`) is
///   ``RemoteConfigError/unexpectedStatus(_:)``; 401/403, 429 (with `Retry-After`) and 5xx
///   behave as for ``HTTPConfigSource``. The transport is TetherHTTP's, with its limits.
public final class OFREPConfigSource: RemoteConfigSource {
  /// The flag service's root URL; requests go to `ofrep/v1/evaluate/flags` under it.
  public let baseURL: URL
  /// The evaluation context sent with every request (`targetingKey` and attributes).
  public let context: [String: JSONValue]
  /// Extra request headers, such as `Authorization` or `X-API-Key` (both treated as
  /// credentials).
  public let headers: [String: String]

  let client: HTTPClient
  private let endpoint = Endpoint<NoParameters, Request, NoBody>.post("/ofrep/v1/evaluate/flags")

  struct Request: Encodable, Sendable {
    let context: [String: JSONValue]
  }

  /// Creates a source for the OFREP service at `baseURL`.
  public init(
    baseURL: URL, context: [String: JSONValue] = [:], headers: [String: String] = [:],
    maximumResponseSize: Int = 4 << 20
  ) {
    self.baseURL = baseURL
    self.context = context
    self.headers = headers
    client = HTTPClient(
      baseURL: baseURL, headers: headers, sensitiveHeaders: ["X-API-Key"],
      maximumResponseSize: maximumResponseSize, retryPolicy: .none)
  }

  /// Evaluates every flag for ``context``, conditionally when `request.previousVersion` has an
  /// `ETag`.
  public func fetch(_ request: ConfigFetchRequest) async throws -> ConfigFetchResult {
    let response: HTTPResponseMessage
    do {
      var httpRequest = try client.request(
        for: endpoint, NoParameters(), body: Request(context: context))
      httpRequest.timeout = .milliseconds(Int64(request.timeout * 1000))
      if let etag = request.previousVersion?.etag {
        httpRequest.setHeader("If-None-Match", etag)
      }
      response = try await client.response(for: httpRequest)
    } catch {
      throw RemoteConfigError(http: error, timeout: request.timeout)
    }
    guard response.status == 200 else {
      if response.status == 400 { throw RemoteConfigError.unexpectedStatus(400) }
      return try HTTPConfigSource.result(of: response)
    }
    let (entries, evaluations) = try Self.flags(in: response.body)
    let version = ConfigVersion(
      etag: response.etag, lastModified: response.lastModified,
      updatedAt: response.lastModifiedDate)
    return .modified(ConfigPayload(entries: entries, version: version, evaluations: evaluations))
  }

  /// The entries and evaluations of a bulk evaluation response.
  static func flags(
    in body: Data
  ) throws -> (entries: [String: JSONValue], evaluations: [String: ConfigEvaluation]) {
    let document: JSONValue
    do {
      document = try JSONValue(parsing: body)
    } catch {
      throw RemoteConfigError.malformedJSON("\(error)")
    }
    guard case .object(let root) = document, case .array(let flags)? = root["flags"] else {
      throw RemoteConfigError.malformedJSON("a bulk evaluation has a \"flags\" array")
    }
    var entries: [String: JSONValue] = [:]
    var evaluations: [String: ConfigEvaluation] = [:]
    for flag in flags {
      guard case .object(let fields) = flag, case .string(let key)? = fields["key"] else {
        continue
      }
      var evaluation = ConfigEvaluation()
      if case .string(let variant)? = fields["variant"] { evaluation.variant = variant }
      if case .string(let reason)? = fields["reason"] { evaluation.reason = reason }
      if case .object(let metadata)? = fields["metadata"] { evaluation.metadata = metadata }
      if case .string(let code)? = fields["errorCode"] { evaluation.errorCode = code }
      if case .string(let details)? = fields["errorDetails"] { evaluation.errorDetails = details }
      // OpenFeature's reason for a failed evaluation, when the service leaves it out.
      if evaluation.errorCode != nil, evaluation.reason == nil { evaluation.reason = "ERROR" }
      evaluations[key] = evaluation
      if evaluation.errorCode == nil, let value = fields["value"] { entries[key] = value }
    }
    return (entries, evaluations)
  }
}
