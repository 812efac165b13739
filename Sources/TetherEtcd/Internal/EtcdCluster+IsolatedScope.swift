import Foundation
import Tether
import TetherHTTP

/// What an isolated storage scope (a test's) does with `.etcd` keys: they never reach the
/// cluster they name.
///
/// A key's cluster value is swapped, once, when the key is created, for the scope's stand-in
/// (``ScopedStandIns``). TetherTesting installs stand-ins that answer from an in-memory etcd
/// (its `InMemoryEtcd`), with etcd's semantics; only the bytes are replaced, through the
/// stand-in's own ``HTTPClient``, so the key store and its watch run as on a real cluster.
/// A program that does not link TetherTesting gets the fallback: a stand-in that refuses every
/// request, so the keys report ``EtcdError/unavailable(reason:)`` saying why, and nothing
/// leaves the process. The process scope has no stand-ins.
extension EtcdCluster {
  /// The cluster a key created now talks to: this one, or in an isolated scope its stand-in.
  var forCurrentScope: EtcdCluster {
    guard let standIns = ScopedStandIns<EtcdCluster>.current else { return self }
    return standIns.standIn(for: self) { $0.standIn(answeredBy: RefusedExchange()) }
  }

  /// A cluster value with this one's endpoints and timeouts whose requests `handler` answers
  /// in the process: what a stand-in is made of.
  package func standIn(answeredBy handler: any HTTPExchangeHandler) -> EtcdCluster {
    // No credentials: a stand-in needs none, and the password stays with the real value.
    let standIn = EtcdCluster(
      endpoints: endpoints, timeout: timeout, attemptTimeout: attemptTimeout,
      watchCheckInterval: watchCheckInterval)
    standIn.http.exchange(with: handler)
    return standIn
  }

  /// Makes keys created for this cluster from now on in the current isolated scope reach the
  /// real cluster (nothing changes outside isolated scopes).
  package func useRealClusterInCurrentScope() { ScopedStandIns<EtcdCluster>.current?.useReal(self) }
}

/// The stand-in's answer when no test library installed one: every request fails as
/// unreachable, with the reason and the remedy.
private struct RefusedExchange: HTTPExchangeHandler {
  static let reason =
    "an isolated storage scope keeps .etcd keys off the network; link TetherTesting (its "
    + ".isolatedSharedState trait or InMemoryEtcd) for an in-memory cluster"

  func respond(to request: HTTPRequest) async throws(HTTPError) -> HTTPResponseMessage {
    throw .unreachable(url: request.url.path, reason: Self.reason)
  }

  func stream(_ request: HTTPRequest) async throws(HTTPError) -> HTTPStreamingResponse {
    throw .unreachable(url: request.url.path, reason: Self.reason)
  }
}
