import Foundation

/// A flag service speaking the OpenFeature Remote Evaluation Protocol's bulk evaluation, as
/// its published OpenAPI description defines it (`POST /ofrep/v1/evaluate/flags`):
///
/// - the request body is `{"context": {...}}`; a body that is not a JSON object (or a
///   `context` that is not an object) is 400 with `{"errorCode": "PARSE_ERROR", ...}`;
/// - 200 answers `{"flags": [...]}`, each flag either `{"key", "value", "variant", "reason",
///   "metadata"}` or `{"key", "errorCode", "errorDetails"}`, with an `ETag`; a request whose
///   `If-None-Match` matches it is 304;
/// - with `bearerToken` set, a request without `Authorization: Bearer <token>` is 401.
///
/// ```swift
/// let flags = OFREPResponder()
/// flags.setFlag("new_checkout", variants: ["on": "true", "off": "false"], defaultVariant: "off",
///               targeting: [.init(attribute: "plan", equals: "pro", variant: "on")])
/// server.serve(flags)
/// ```
///
/// All methods are thread-safe.
public final class OFREPResponder: Sendable {
  /// Picks a variant when a context attribute has a value.
  public struct Rule: Sendable, Equatable {
    /// The context attribute compared, such as `plan` or `targetingKey`.
    public var attribute: String
    /// The attribute's value (as text) that selects `variant`.
    public var equals: String
    /// The variant chosen.
    public var variant: String

    /// Creates a rule.
    public init(attribute: String, equals: String, variant: String) {
      self.attribute = attribute
      self.equals = equals
      self.variant = variant
    }
  }

  struct Flag: Sendable {
    var variants: [String: String]
    var defaultVariant: String
    var targeting: [Rule]
    var metadata: [String: String]
    var errorCode: String?
    var errorDetails = "evaluation failed"
    var needsTargetingKey = false
  }

  private let flags = LockedState<[String: Flag]>([:])
  /// The token a request must carry (`Authorization: Bearer …`), if any.
  public let bearerToken: String?

  /// The path of the bulk evaluation endpoint.
  public static let path = "/ofrep/v1/evaluate/flags"

  /// Creates a responder with no flags.
  public init(bearerToken: String? = nil) {
    self.bearerToken = bearerToken
  }

  /// Defines (or replaces) a flag. `variants` maps each variant name to its value as JSON
  /// text (`"true"`, `"\"blue\""`, `"{\"a\":1}"`); the first matching rule picks the
  /// variant (reason `TARGETING_MATCH`), otherwise `defaultVariant` (reason `STATIC`, or
  /// `DEFAULT` when the flag has rules).
  public func setFlag(
    _ key: String, variants: [String: String], defaultVariant: String,
    targeting: [Rule] = [], metadata: [String: String] = [:]
  ) {
    flags.withLock {
      $0[key] = Flag(
        variants: variants, defaultVariant: defaultVariant, targeting: targeting,
        metadata: metadata)
    }
  }

  /// Makes `key` fail its evaluation with `errorCode` (such as `GENERAL` or
  /// `TARGETING_KEY_MISSING`) and `details` as its `errorDetails`.
  public func failFlag(_ key: String, errorCode: String, details: String = "evaluation failed") {
    flags.withLock {
      $0[key] = Flag(
        variants: [:], defaultVariant: "", targeting: [], metadata: [:], errorCode: errorCode,
        errorDetails: details)
    }
  }

  /// Defines a flag that needs a `targetingKey` in the context (a percentage rollout): without
  /// one its evaluation fails with `TARGETING_KEY_MISSING`, as flagd's does; with one it is
  /// `value` (JSON text), reason `SPLIT`.
  public func setRolloutFlag(_ key: String, value: String) {
    flags.withLock {
      $0[key] = Flag(
        variants: ["rollout": value], defaultVariant: "rollout", targeting: [], metadata: [:],
        needsTargetingKey: true)
    }
  }

  /// Removes a flag.
  public func removeFlag(_ key: String) {
    _ = flags.withLock { $0.removeValue(forKey: key) }
  }

  func respond(to request: RecordedRequest) -> HTTPResponse {
    guard request.method == "POST" else { return HTTPResponse(status: 405) }
    if let bearerToken, request.header("Authorization") != "Bearer \(bearerToken)" {
      return HTTPResponse(status: 401)
    }
    guard
      let object = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any],
      object["context"] == nil || object["context"] is [String: Any]
    else {
      return Self.json(
        400, ["errorCode": "PARSE_ERROR", "errorDetails": "the body is not an evaluation request"])
    }
    let context = (object["context"] as? [String: Any]) ?? [:]
    let evaluated = flags.withLock { $0 }.sorted { $0.key < $1.key }.map { key, flag in
      Self.evaluate(key, flag, context: context)
    }
    let body = try! JSONSerialization.data(
      withJSONObject: ["flags": evaluated], options: [.sortedKeys])
    let etag = HTTPDocument.etag(for: body)
    if let tags = request.header("If-None-Match"),
      tags.split(separator: ",").contains(where: {
        $0.trimmingCharacters(in: .whitespaces) == etag
      })
    {
      return HTTPResponse(status: 304, headers: ["ETag": etag])
    }
    return HTTPResponse(
      status: 200, headers: ["ETag": etag, "Content-Type": "application/json"], body: body)
  }

  private static func evaluate(_ key: String, _ flag: Flag, context: [String: Any]) -> [String: Any]
  {
    if let errorCode = flag.errorCode {
      return ["key": key, "errorCode": errorCode, "errorDetails": flag.errorDetails]
    }
    if flag.needsTargetingKey, (context["targetingKey"] as? String)?.isEmpty ?? true {
      return [
        "key": key, "errorCode": "TARGETING_KEY_MISSING",
        "errorDetails": "flag \(key) needs a targetingKey in the evaluation context",
      ]
    }
    var variant = flag.defaultVariant
    var reason = flag.needsTargetingKey ? "SPLIT" : flag.targeting.isEmpty ? "STATIC" : "DEFAULT"
    for rule in flag.targeting where context[rule.attribute].map({ "\($0)" }) == rule.equals {
      variant = rule.variant
      reason = "TARGETING_MATCH"
      break
    }
    guard let text = flag.variants[variant],
      let value = try? JSONSerialization.jsonObject(
        with: Data(text.utf8), options: [.fragmentsAllowed])
    else {
      return ["key": key, "errorCode": "GENERAL", "errorDetails": "no variant \(variant)"]
    }
    var result: [String: Any] = ["key": key, "value": value, "variant": variant, "reason": reason]
    if !flag.metadata.isEmpty { result["metadata"] = flag.metadata }
    return result
  }

  private static func json(_ status: Int, _ object: [String: Any]) -> HTTPResponse {
    HTTPResponse(
      status: status, headers: ["Content-Type": "application/json"],
      body: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
  }
}

extension TestHTTPServer {
  /// Serves `responder` at `OFREPResponder.path`.
  public func serve(_ responder: OFREPResponder) {
    setHandler(at: OFREPResponder.path) { request in responder.respond(to: request) }
  }
}
