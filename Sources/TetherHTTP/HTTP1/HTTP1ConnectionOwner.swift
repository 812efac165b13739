/// What a connection reports to whoever opened it: a ``ConnectionPool``, or the
/// ``StreamExchange`` that owns it alone. Called on the connection's loop, always as the last
/// thing the connection does in that step, so the owner may hand it the next exchange at once.
protocol HTTP1ConnectionOwner: AnyObject {
  func connectionEstablished(_ connection: HTTP1Connection)
  func connectionFailed(_ connection: HTTP1Connection, _ error: HTTPError)
  /// The exchange got its whole answer; `reusable` when the connection stays open for another.
  func exchangeFinished(_ connection: HTTP1Connection, reusable: Bool)
  /// The exchange failed and the connection is closed. `reusedAndSilent`: the connection had
  /// served an earlier exchange and ended before one byte of this answer (the server most
  /// likely closed it while idle, so the request may never have reached it).
  func exchangeFailed(_ connection: HTTP1Connection, _ error: HTTPError, reusedAndSilent: Bool)
  /// An idle connection was closed by the server (or failed).
  func idleConnectionClosed(_ connection: HTTP1Connection)
  /// The connection, handed an exchange, was found unusable before sending anything (the
  /// server closed it, or sent bytes nobody asked for); it is closed, and nothing was sent.
  func exchangeNotStarted(_ connection: HTTP1Connection)
}
