/// How a flag service evaluated one flag for the evaluation context, as OpenFeature reports
/// it (see ``OFREPConfigSource``).
public struct ConfigEvaluation: Sendable, Hashable {
  /// The variant the value belongs to, such as `"on"` or `"treatment-b"`.
  public var variant: String?
  /// Why this value was chosen: an OpenFeature reason such as `STATIC`, `TARGETING_MATCH`,
  /// `SPLIT`, `DISABLED` or `DEFAULT`.
  public var reason: String?
  /// Arbitrary metadata the service attached (booleans, strings, numbers).
  public var metadata: [String: JSONValue]
  /// The OpenFeature error code when the flag could not be evaluated (`FLAG_NOT_FOUND`,
  /// `PARSE_ERROR`, `TARGETING_KEY_MISSING`, `INVALID_CONTEXT`, `GENERAL`); the entry then
  /// has no remote value and lookups use the default.
  public var errorCode: String?
  /// The service's description of the error, if any.
  public var errorDetails: String?

  /// Creates an evaluation.
  public init(
    variant: String? = nil, reason: String? = nil, metadata: [String: JSONValue] = [:],
    errorCode: String? = nil, errorDetails: String? = nil
  ) {
    self.variant = variant
    self.reason = reason
    self.metadata = metadata
    self.errorCode = errorCode
    self.errorDetails = errorDetails
  }
}
