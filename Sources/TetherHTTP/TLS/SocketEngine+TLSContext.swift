import Foundation

extension SocketEngine {
  /// Makes the client's TLS context before an `https` request to `url` needs it, on
  /// ``TLSContextCache/builder`` and awaited, so that the first request's 50–100 ms of reading
  /// the trust store never runs on a thread of the cooperative pool. Afterwards the engine's
  /// synchronous look-up finds it in ``TLSContextCache/shared``; a request that is not
  /// `https`, or comes once the context is made, costs one look-up.
  ///
  /// - Throws: the failure to make the context, as the request's ``HTTPError``.
  func prepareTLSContext(for url: URL) async throws(HTTPError) {
    guard carriesHTTPS, url.scheme?.lowercased() == "https",
      TLSContextCache.shared.cachedContext(for: tlsConfiguration) == nil
    else { return }
    do throws(TLSFailure) {
      _ = try await TLSContextCache.shared.contextOffThePool(for: tlsConfiguration)
    } catch {
      throw error.httpError(url: HTTPError.redacted(url))
    }
  }
}
