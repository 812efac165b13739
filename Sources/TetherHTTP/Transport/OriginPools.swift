import Synchronization

/// One origin's buffered requests, spread over the process's I/O threads: a
/// ``ConnectionPool`` on each loop ("lane"), each holding a share of the per-origin cap.
///
/// With every connection of an origin on one loop, that loop's thread read, parsed and
/// resumed every answer while the other waited: 32 requests in flight kept one of two cores
/// busy. Two lanes carry them side by side (`http.concurrent-32`: about 0.12× URLSession,
/// from 0.15–0.16× on one loop).
///
/// - The shares add up to the cap (8 by default: 4 and 4), so the origin never has more
///   connections than the cap. A cap smaller than the number of loops uses that many lanes.
/// - A request joins the lane with the fewest requests in flight for its share; on a tie the
///   first. A caller that sends one request after another therefore always uses the first
///   lane, and one kept-alive connection carries the whole sequence.
/// - Each lane serves its waiters oldest first; across lanes the order is close to, not
///   exactly, arrival order.
final class OriginPools: Sendable {
  /// One loop's pool, with its share of the cap and the requests it carries now.
  final class Lane: Sendable {
    let pool: ConnectionPool
    let share: Int
    /// Requests handed to `pool` whose callers have not resumed yet.
    let inFlight = Atomic<Int>(0)

    init(pool: ConnectionPool, share: Int) {
      self.pool = pool
      self.share = share
    }
  }

  let lanes: [Lane]

  /// Pools on `loops` (the first loop first) sharing `maximumConnections` between them.
  init(
    loops: [EventLoop], route: ConnectionRoute, maximumConnections: Int,
    connectTimeout: Double, idleTimeout: Double
  ) {
    let cap = max(1, maximumConnections)
    let count = max(1, min(loops.count, cap))
    lanes = (0..<count).map { index in
      let share = cap / count + (index < cap % count ? 1 : 0)
      return Lane(
        pool: ConnectionPool(
          loop: loops[index], route: route, maximumConnections: share,
          connectTimeout: connectTimeout, idleTimeout: idleTimeout),
        share: share)
    }
  }

  /// The lane for a new request: the fewest in flight per connection it may open, the
  /// first on a tie. Two callers choosing at the same moment may pick the same lane; that
  /// only queues one request behind the other, as a single pool would.
  func lane() -> Lane {
    var best = lanes[0]
    var bestLoad = best.inFlight.load(ordering: .relaxed)
    for lane in lanes.dropFirst() {
      let load = lane.inFlight.load(ordering: .relaxed)
      if load * best.share < bestLoad * lane.share {
        best = lane
        bestLoad = load
      }
    }
    return best
  }

  /// Fails what waits and closes idle connections, in every lane.
  func shutDown() {
    for lane in lanes { lane.pool.shutDown() }
  }
}
