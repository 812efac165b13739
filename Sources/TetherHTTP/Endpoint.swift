import Foundation
import Streams
import TetherSupport

/// One operation of an HTTP API, declared once and typed: its method, its path template, how
/// its parameters fill the URL, how its body is encoded and how its response is decoded.
///
/// ```swift
/// struct UserRepos: Encodable, Hashable, Sendable { var user: String; var sort: String? }
///
/// enum GitHub {
///   // {user} is filled from the parameters' field of that name; the others become the query.
///   static let repos = Endpoint<UserRepos, NoBody, [Repo]>.get("/users/{user}/repos")
///   static let createIssue = Endpoint<IssuePath, NewIssue, Issue>.post("/repos/{owner}/{repo}/issues")
/// }
/// let repos = try await api.send(GitHub.repos, UserRepos(user: "apple", sort: "updated"))
/// // GET /users/apple/repos?sort=updated
/// ```
///
/// - Parameters are any `Encodable` struct of scalars (strings, numbers, booleans, dates as
///   their `Encodable` form, and arrays of those, which repeat the query item); `nil`
///   optionals are left out. Placeholder values are percent-encoded, so `a/b` stays one
///   path segment.
/// - A placeholder without a parameter of that name (or whose value is `nil`), or a brace
///   that is not closed, is ``HTTPError/invalidRequest(_:)`` the first time the endpoint is
///   used, naming the placeholder and the parameters type.
/// - The response is decoded only for an acceptable status (200–299 by default); any other
///   status is ``HTTPError/status(_:url:bodyExcerpt:retryAfter:)``.
public struct Endpoint<Parameters: Encodable & Sendable, Body: Sendable, Response: Sendable>:
  Sendable
{
  /// The method.
  public var method: HTTPMethod
  /// The path template, relative to the client's base URL, such as `/users/{user}/repos`.
  public var path: String
  /// Headers this endpoint adds to the client's.
  public var headers: [String: String]
  /// The statuses whose body is decoded as `Response`.
  public var acceptableStatuses: Range<Int>
  /// The `Accept` header sent when none is set.
  public var accept: String

  let encodeBody: @Sendable (Body) throws -> (Data, String)?
  let decodeBody: @Sendable (Data) throws -> Response
  /// How the client receives this endpoint's answer, when not by reading the whole body and
  /// decoding it: a download streams it to a file. Typed calls (`send`, `response`) use it;
  /// paths that need the buffered body (`.http` keys) use `decodeBody`.
  var receive:
    (@Sendable (HTTPClient, HTTPRequest) async throws(HTTPError) -> HTTPDecodedResponse<Response>)?

  /// Creates an endpoint with custom body encoding and response decoding.
  ///
  /// - Parameters:
  ///   - method: The method.
  ///   - path: The path template, such as `/users/{user}/repos`.
  ///   - headers: Headers this endpoint adds to the client's.
  ///   - acceptableStatuses: The statuses whose body is decoded; others are errors.
  ///   - accept: The `Accept` header sent when none is set.
  ///   - encodeBody: The body's bytes and content type, or `nil` to send no body.
  ///   - decodeResponse: The response from the body of an acceptable status.
  public init(
    method: HTTPMethod, path: String, headers: [String: String] = [:],
    acceptableStatuses: Range<Int> = 200..<300, accept: String = "application/json",
    encodeBody: @escaping @Sendable (Body) throws -> (data: Data, contentType: String)?,
    decodeResponse: @escaping @Sendable (Data) throws -> Response
  ) {
    self.method = method
    self.path = path
    self.headers = headers
    self.acceptableStatuses = acceptableStatuses
    self.accept = accept
    self.encodeBody = { body in try encodeBody(body).map { ($0.data, $0.contentType) } }
    self.decodeBody = decodeResponse
  }

  // MARK: - Using the endpoint

  func url(
    relativeTo baseURL: URL, _ parameters: Parameters, remembered: EndpointURLs? = nil
  ) throws(HTTPError) -> URL {
    let items: [ParameterEncoder.Item]
    do {
      items = try ParameterEncoder.items(of: parameters)
    } catch {
      throw .invalidRequest(
        "the parameters \(Parameters.self) cannot be written in a URL: \(error)")
    }
    let (filledPath, query) = try PathTemplate.fill(
      path, with: items, parametersType: "\(Parameters.self)")
    guard let remembered else { return try Self.url(baseURL, filledPath, query) }
    // The URL depends only on the base (the client's, fixed) and these two parts.
    var key = filledPath
    for item in query { key += "\u{0}" + item.name + "\u{0}" + item.value }
    if let known = remembered.url(for: key) { return known }
    let made = try Self.url(baseURL, filledPath, query)
    remembered.remember(made, for: key)
    return made
  }

  private static func url(
    _ baseURL: URL, _ filledPath: String, _ query: [ParameterEncoder.Item]
  ) throws(HTTPError) -> URL {
    guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true) else {
      throw .invalidRequest("the base URL is not valid")
    }
    var basePath = components.percentEncodedPath
    while basePath.hasSuffix("/") { basePath.removeLast() }
    components.percentEncodedPath =
      basePath + (filledPath.hasPrefix("/") ? filledPath : "/" + filledPath)
    let extra = query.map { PathTemplate.escape($0.name) + "=" + PathTemplate.escape($0.value) }
    let fullQuery = ([components.percentEncodedQuery ?? ""] + extra).filter { !$0.isEmpty }
    components.percentEncodedQuery = fullQuery.isEmpty ? nil : fullQuery.joined(separator: "&")
    guard let url = components.url else {
      throw .invalidRequest("the path \(filledPath) does not make a valid URL")
    }
    return url
  }

  func encode(_ body: Body) throws(HTTPError) -> (Data, String)? {
    do {
      return try encodeBody(body)
    } catch {
      throw .invalidRequest("the body \(Body.self) cannot be encoded: \(error)")
    }
  }

  func decode(_ response: HTTPResponseMessage, url: URL) throws(HTTPError) -> Response {
    guard acceptableStatuses.contains(response.status) else {
      throw .status(
        response.status, url: HTTPError.redacted(url),
        bodyExcerpt: HTTPError.excerpt(of: response.body), retryAfter: response.retryAfter)
    }
    return try decode(response.body, url: url)
  }

  func decode(_ body: Data, url: URL) throws(HTTPError) -> Response {
    do {
      return try decodeBody(body)
    } catch let error as DecodingError {
      let (path, reason) = Self.describe(error)
      throw .undecodable(url: HTTPError.redacted(url), path: path, reason: reason)
    } catch {
      throw .undecodable(url: HTTPError.redacted(url), path: "", reason: "\(error)")
    }
  }

  static func describe(_ error: DecodingError) -> (path: String, reason: String) {
    let context: DecodingError.Context
    let reason: String
    switch error {
    case .typeMismatch(let type, let c):
      context = c
      reason = "expected \(type): \(c.debugDescription)"
    case .valueNotFound(let type, let c):
      context = c
      reason = "expected \(type) but found null"
    case .keyNotFound(let key, let c):
      context = c
      reason = "the key \"\(key.stringValue)\" is missing"
    case .dataCorrupted(let c):
      context = c
      reason = c.debugDescription
    @unknown default:
      return ("", "\(error)")
    }
    var path = ""
    for key in context.codingPath {
      if let index = key.intValue {
        path += "[\(index)]"
      } else {
        path += (path.isEmpty ? "" : ".") + key.stringValue
      }
    }
    return (path, reason)
  }
}

// MARK: - Declaring endpoints

extension Endpoint where Body == NoBody, Response: Decodable {
  /// A `GET` endpoint whose JSON response is decoded as `Response`.
  public static func get(
    _ path: String, headers: [String: String] = [:],
    acceptableStatuses: Range<Int> = 200..<300, decoder: JSONDecoder = JSONDecoder()
  ) -> Endpoint {
    Endpoint(
      method: .get, path: path, headers: headers, acceptableStatuses: acceptableStatuses,
      encodeBody: { _ in nil }, decodeResponse: JSONCoding.decoder(Response.self, decoder))
  }

  /// A `DELETE` endpoint; use `NoBody` as `Response` to ignore the answer's body.
  public static func delete(
    _ path: String, headers: [String: String] = [:],
    acceptableStatuses: Range<Int> = 200..<300, decoder: JSONDecoder = JSONDecoder()
  ) -> Endpoint {
    Endpoint(
      method: .delete, path: path, headers: headers, acceptableStatuses: acceptableStatuses,
      encodeBody: { _ in nil }, decodeResponse: JSONCoding.decoder(Response.self, decoder))
  }
}

extension Endpoint where Body: Encodable, Response: Decodable {
  /// A `POST` endpoint with a JSON body.
  public static func post(
    _ path: String, headers: [String: String] = [:],
    acceptableStatuses: Range<Int> = 200..<300, encoder: JSONEncoder = JSONEncoder(),
    decoder: JSONDecoder = JSONDecoder()
  ) -> Endpoint {
    json(.post, path, headers, acceptableStatuses, encoder, decoder)
  }

  /// A `PUT` endpoint with a JSON body.
  public static func put(
    _ path: String, headers: [String: String] = [:],
    acceptableStatuses: Range<Int> = 200..<300, encoder: JSONEncoder = JSONEncoder(),
    decoder: JSONDecoder = JSONDecoder()
  ) -> Endpoint {
    json(.put, path, headers, acceptableStatuses, encoder, decoder)
  }

  /// A `PATCH` endpoint with a JSON body.
  public static func patch(
    _ path: String, headers: [String: String] = [:],
    acceptableStatuses: Range<Int> = 200..<300, encoder: JSONEncoder = JSONEncoder(),
    decoder: JSONDecoder = JSONDecoder()
  ) -> Endpoint {
    json(.patch, path, headers, acceptableStatuses, encoder, decoder)
  }

  private static func json(
    _ method: HTTPMethod, _ path: String, _ headers: [String: String],
    _ acceptableStatuses: Range<Int>, _ encoder: JSONEncoder, _ decoder: JSONDecoder
  ) -> Endpoint {
    Endpoint(
      method: method, path: path, headers: headers, acceptableStatuses: acceptableStatuses,
      encodeBody: { body in
        if body is NoBody { return nil }
        return (try encoder.encode(body), "application/json")
      },
      decodeResponse: JSONCoding.decoder(Response.self, decoder))
  }
}

/// The URLs a client's endpoints made lately, by filled path and query: working a URL out
/// of the base URL's parts costs more than the rest of building a request, and a client
/// calls the same few URLs again and again.
final class EndpointURLs: Sendable {
  private let urls = Lock<[String: URL]>([:])
  /// Beyond this many, the memo starts over (a client calling many distinct URLs, one per
  /// item id, gains nothing from it and must not grow without bound).
  static let capacity = 128

  init() {}

  func url(for key: String) -> URL? { urls.withLock { $0[key] } }

  func remember(_ url: URL, for key: String) {
    urls.withLock { urls in
      if urls.count >= Self.capacity { urls.removeAll(keepingCapacity: true) }
      urls[key] = url
    }
  }

  /// How many URLs are remembered now.
  var count: Int { urls.withLock { $0.count } }
}

enum JSONCoding {
  static func decoder<Response: Decodable & Sendable>(
    _ type: Response.Type, _ decoder: JSONDecoder
  ) -> @Sendable (Data) throws -> Response {
    if let none = NoBody() as? Response { return { _ in none } }
    return { data in try decoder.decode(Response.self, from: data) }
  }
}
