import Foundation

/// A typed endpoint's decoded answer together with the response it came in: its status and
/// headers, such as the `ETag` to send with the next conditional request.
///
/// ```swift
/// let answer = try await api.response(for: GitHub.repos, UserRepos(user: "apple"))
/// print(answer.value.count, answer.status, answer.etag ?? "no ETag")
/// ```
public struct HTTPDecodedResponse<Value: Sendable>: Sendable {
  /// The decoded body.
  public var value: Value
  /// The whole response: status, headers (lower-cased names) and the raw body.
  public var response: HTTPResponseMessage

  /// Creates a decoded response.
  public init(value: Value, response: HTTPResponseMessage) {
    self.value = value
    self.response = response
  }

  /// The status code.
  public var status: Int { response.status }
  /// Header fields with lower-cased names.
  public var headers: [String: String] { response.headers }
  /// The `ETag`, when it is a well-formed entity tag.
  public var etag: String? { response.etag }
}

extension HTTPClient {
  // MARK: - Sending typed endpoints

  /// Sends `endpoint` with `parameters` and `body`, and decodes the response.
  ///
  /// `headers` go with this call only, over the client's and the endpoint's (same names
  /// win, compared case-insensitively).
  ///
  /// ```swift
  /// let issue = try await api.send(
  ///   GitHub.createIssue, IssuePath(owner: "a", repo: "b"), body: NewIssue(title: "…"),
  ///   headers: ["Idempotency-Key": key])
  /// ```
  ///
  /// - Throws: ``HTTPError``: a status outside the endpoint's acceptable ones is
  ///   ``HTTPError/status(_:url:bodyExcerpt:retryAfter:)``; a body that does not decode is
  ///   ``HTTPError/undecodable(url:path:reason:)``.
  public func send<Parameters, Body, Response>(
    _ endpoint: Endpoint<Parameters, Body, Response>, _ parameters: Parameters, body: Body,
    headers: [String: String] = [:]
  ) async throws(HTTPError) -> Response {
    try await response(for: endpoint, parameters, body: body, headers: headers).value
  }

  /// Sends a body-less `endpoint` (a `GET` or `DELETE`) with `parameters`.
  public func send<Parameters, Response>(
    _ endpoint: Endpoint<Parameters, NoBody, Response>, _ parameters: Parameters,
    headers: [String: String] = [:]
  ) async throws(HTTPError) -> Response {
    try await send(endpoint, parameters, body: NoBody(), headers: headers)
  }

  /// Sends a body-less `endpoint` that takes no parameters.
  public func send<Response>(
    _ endpoint: Endpoint<NoParameters, NoBody, Response>, headers: [String: String] = [:]
  ) async throws(HTTPError) -> Response {
    try await send(endpoint, NoParameters(), body: NoBody(), headers: headers)
  }

  /// Sends an `endpoint` that takes no parameters, with `body`.
  public func send<Body, Response>(
    _ endpoint: Endpoint<NoParameters, Body, Response>, body: Body,
    headers: [String: String] = [:]
  ) async throws(HTTPError) -> Response {
    try await send(endpoint, NoParameters(), body: body, headers: headers)
  }

  // MARK: - The decoded value with its response

  /// Sends `endpoint` like ``send(_:_:body:headers:)`` and returns the decoded value with
  /// the response it came in (status and headers, such as `ETag`).
  public func response<Parameters, Body, Response>(
    for endpoint: Endpoint<Parameters, Body, Response>, _ parameters: Parameters, body: Body,
    headers: [String: String] = [:]
  ) async throws(HTTPError) -> HTTPDecodedResponse<Response> {
    var request = try self.request(for: endpoint, parameters, body: body)
    for (name, value) in headers { request.setHeader(name, value) }
    if let receive = endpoint.receive { return try await receive(self, request) }
    let response = try await self.response(for: request)
    return HTTPDecodedResponse(
      value: try endpoint.decode(response, url: request.url), response: response)
  }

  /// The decoded value and response of a body-less `endpoint` with `parameters`.
  public func response<Parameters, Response>(
    for endpoint: Endpoint<Parameters, NoBody, Response>, _ parameters: Parameters,
    headers: [String: String] = [:]
  ) async throws(HTTPError) -> HTTPDecodedResponse<Response> {
    try await response(for: endpoint, parameters, body: NoBody(), headers: headers)
  }

  /// The decoded value and response of a body-less `endpoint` that takes no parameters.
  public func response<Response>(
    for endpoint: Endpoint<NoParameters, NoBody, Response>, headers: [String: String] = [:]
  ) async throws(HTTPError) -> HTTPDecodedResponse<Response> {
    try await response(for: endpoint, NoParameters(), body: NoBody(), headers: headers)
  }

  /// The decoded value and response of an `endpoint` that takes no parameters, with `body`.
  public func response<Body, Response>(
    for endpoint: Endpoint<NoParameters, Body, Response>, body: Body,
    headers: [String: String] = [:]
  ) async throws(HTTPError) -> HTTPDecodedResponse<Response> {
    try await response(for: endpoint, NoParameters(), body: body, headers: headers)
  }

  // MARK: - Building requests

  /// The request `endpoint` makes with `parameters` and `body`: its URL (path placeholders
  /// filled, the other parameters as the query), the client's and the endpoint's headers,
  /// and the encoded body.
  ///
  /// - Throws: ``HTTPError/invalidRequest(_:)`` for a placeholder without a parameter or a
  ///   body that cannot be encoded.
  public func request<Parameters, Body, Response>(
    for endpoint: Endpoint<Parameters, Body, Response>, _ parameters: Parameters, body: Body
  ) throws(HTTPError) -> HTTPRequest {
    let url = try endpoint.url(relativeTo: baseURL, parameters, remembered: endpointURLs)
    var request = HTTPRequest(method: endpoint.method, url: url, headers: headers)
    for (name, value) in endpoint.headers { request.setHeader(name, value) }
    if let (data, contentType) = try endpoint.encode(body) {
      request.body = data
      if request.header("Content-Type") == nil { request.setHeader("Content-Type", contentType) }
    }
    if request.header("Accept") == nil { request.setHeader("Accept", endpoint.accept) }
    return request
  }

  /// The request a body-less `endpoint` makes with `parameters`.
  public func request<Parameters, Response>(
    for endpoint: Endpoint<Parameters, NoBody, Response>, _ parameters: Parameters
  ) throws(HTTPError) -> HTTPRequest {
    try request(for: endpoint, parameters, body: NoBody())
  }

  /// The request a body-less `endpoint` that takes no parameters makes.
  public func request<Response>(
    for endpoint: Endpoint<NoParameters, NoBody, Response>
  ) throws(HTTPError) -> HTTPRequest {
    try request(for: endpoint, NoParameters(), body: NoBody())
  }

  /// The request an `endpoint` that takes no parameters makes with `body`.
  public func request<Body, Response>(
    for endpoint: Endpoint<NoParameters, Body, Response>, body: Body
  ) throws(HTTPError) -> HTTPRequest {
    try request(for: endpoint, NoParameters(), body: body)
  }
}
