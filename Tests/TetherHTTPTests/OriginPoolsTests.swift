import Foundation
import Testing

@testable import TetherHTTP

/// How one origin's requests are spread over the I/O threads: the cap is shared out, and a
/// caller that sends one request at a time always lands on the same pool.
@Suite struct OriginPoolsTests {
  /// Two loops of their own, as on the two-core machines the figures come from.
  static let group = try! EventLoopGroup(count: 2)

  private func pools(cap: Int) throws -> OriginPools {
    let url = try #require(URL(string: "http://127.0.0.1:9/"))
    return OriginPools(
      loops: Self.group.loops, route: .to(url, proxy: nil, tls: nil), maximumConnections: cap,
      connectTimeout: 1, idleTimeout: 1)
  }

  @Test func theSharesAddUpToTheCapAndNoLaneIsEmpty() throws {
    #expect(try pools(cap: 1).lanes.map(\.share) == [1])
    #expect(try pools(cap: 2).lanes.map(\.share) == [1, 1])
    #expect(try pools(cap: 3).lanes.map(\.share) == [2, 1])
    #expect(try pools(cap: 8).lanes.map(\.share) == [4, 4])
    #expect(
      try pools(cap: 8).lanes.map(\.pool.loop).map(ObjectIdentifier.init)
        == Self.group.loops.map(ObjectIdentifier.init))
  }

  /// Each new origin starts on the next loop, so that origins used one request at a time
  /// spread over the threads.
  @Test func successiveOriginsStartOnSuccessiveLoops() {
    let group = try! EventLoopGroup(count: 3)
    let ids = { (loops: [EventLoop]) in loops.map(ObjectIdentifier.init) }
    let all = ids(group.loops)
    for turn in 0..<6 {
      let start = turn % 3
      #expect(ids(group.loopsInTurn()) == Array(all[start...] + all[..<start]), "turn \(turn)")
    }
  }

  @Test func requestsOneAtATimeAlwaysUseTheFirstLane() throws {
    let origin = try pools(cap: 8)
    for _ in 0..<5 {
      let lane = origin.lane()
      #expect(lane === origin.lanes[0])
      lane.inFlight.add(1, ordering: .relaxed)
      lane.inFlight.subtract(1, ordering: .relaxed)
    }
  }

  @Test func concurrentRequestsGoToTheLaneWithTheMostRoom() throws {
    let origin = try pools(cap: 3)
    let (first, second) = (origin.lanes[0], origin.lanes[1])
    // Shares 2 and 1: the first lane takes two for each one the second takes.
    var chosen: [Int] = []
    for _ in 0..<6 {
      let lane = origin.lane()
      lane.inFlight.add(1, ordering: .relaxed)
      chosen.append(lane === first ? 0 : 1)
    }
    #expect(chosen == [0, 1, 0, 0, 1, 0])
    #expect(first.inFlight.load(ordering: .relaxed) == 4)
    #expect(second.inFlight.load(ordering: .relaxed) == 2)
    // One finishing on the second lane makes it the one with room.
    second.inFlight.subtract(1, ordering: .relaxed)
    #expect(origin.lane() === second)
  }
}
