/// A step ``HTTPClient`` runs around every request: to add a header, sign a request, log, or
/// refresh an expired token and try again.
///
/// ```swift
/// let auth = HTTPInterceptor(
///   prepare: { request in request.setHeader("Authorization", "Bearer \(await tokens.current)") },
///   inspect: { _, response in
///     guard response.status == 401 else { return .proceed }
///     await tokens.refresh()
///     return .retry   // the request is prepared and sent again, once
///   })
/// let client = HTTPClient(baseURL: url, interceptors: [auth])
/// ```
///
/// `prepare` runs before each attempt in the order the interceptors are given; `inspect`
/// runs after each response in the same order, before the status is checked. A thrown error
/// ends the request with ``HTTPError/interceptorFailed(_:)`` (or the ``HTTPError`` thrown).
public struct HTTPInterceptor: Sendable {
  /// What to do after inspecting a response.
  public enum Decision: Sendable, Hashable {
    /// Go on with this response.
    case proceed
    /// Prepare and send the request again (at most once per request).
    case retry
  }

  let prepare: @Sendable (inout HTTPRequest) async throws -> Void
  let inspect: @Sendable (HTTPRequest, HTTPResponseMessage) async throws -> Decision

  /// Creates an interceptor from a request step and a response step; either may be omitted.
  public init(
    prepare: @escaping @Sendable (inout HTTPRequest) async throws -> Void = { _ in },
    inspect: @escaping @Sendable (HTTPRequest, HTTPResponseMessage) async throws -> Decision = {
      _, _ in .proceed
    }
  ) {
    self.prepare = prepare
    self.inspect = inspect
  }
}
