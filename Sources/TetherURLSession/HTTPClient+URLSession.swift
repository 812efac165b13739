import Foundation
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPClient {
  /// Sends every request of this client through URLSession instead of Tether's engine, and
  /// returns the client.
  ///
  /// ```swift
  /// import TetherHTTP
  /// import TetherURLSession
  ///
  /// let api = HTTPClient(baseURL: URL(string: "https://api.example.com")!).useURLSession()
  /// ```
  ///
  /// Call it right after creating the client, before its first request. The executor above
  /// the transport is the same: interceptors, retries, the deadline, the size limit, the
  /// request checks and redirects behave as on the engine. What differs is URLSession's:
  ///
  /// - It trusts the system's certificate authorities only: `trustedCertificates` and a client
  ///   identity are not used, and neither is `proxy` (URLSession reads its own settings).
  /// - It inflates compressed bodies (the size limit counts the inflated bytes).
  /// - On Linux it loads FoundationNetworking and libcurl into the process, and
  ///   swift-corelibs-foundation's URLSession ends the process on some answers (a response
  ///   with trailers, a connection closed before any answer). Prefer the engine there; this
  ///   is for a machine where the engine cannot run (no OpenSSL 3 for `https`).
  ///
  /// On Apple platforms a client already goes through URLSession; calling this changes
  /// nothing but the session, which becomes the client's own.
  @discardableResult
  public func useURLSession() -> HTTPClient {
    carry(over: URLSessionTransport())
    return self
  }
}
