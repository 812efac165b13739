/// The body of an endpoint that sends none, or the response of one whose body is ignored.
///
/// ```swift
/// static let deleteRepo = Endpoint<RepoPath, NoBody, NoBody>.delete("/repos/{owner}/{repo}")
/// ```
public struct NoBody: Codable, Hashable, Sendable {
  /// The empty body.
  public init() {}
}

/// The parameters of an endpoint whose path has no placeholders and that takes no query.
///
/// ```swift
/// static let health = Endpoint<NoParameters, NoBody, Health>.get("/health")
/// let health = try await api.send(health)
/// ```
public struct NoParameters: Codable, Hashable, Sendable {
  /// No parameters.
  public init() {}
}
