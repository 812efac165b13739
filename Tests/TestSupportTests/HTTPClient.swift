import Foundation
import TestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A URLSession client with caching off, so every request reaches the server and 304s are
/// seen as they are sent.
enum HTTPClient {
  static let session: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.timeoutIntervalForRequest = 30
    return URLSession(configuration: configuration)
  }()

  /// Sends a request and returns the body and response.
  static func fetch(
    _ url: URL, method: String = "GET", headers: [String: String] = [:], body: Data? = nil
  ) async throws -> (body: Data, response: HTTPURLResponse) {
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.httpBody = body
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await session.data(for: request)
    return (data, response as! HTTPURLResponse)
  }
}
