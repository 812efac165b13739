import Foundation
import TestSupport
import Testing
import Tether
import TetherEtcd

/// Many keys, few threads and sockets: every watch of a cluster value shares one stream.
@Suite(.enabled(if: etcdInstalled, "etcd is not installed"))
struct EtcdWatchSharingTests {
  /// Counted in a child process (`tether-etcd-child watch-many`), so that tests running in
  /// parallel in this one do not add their own threads and sockets to the figures.
  @Test func twoHundredKeysAddAtMostEightThreadsAndSixteenSocketsAndEveryChangeArrives()
    async throws
  {
    let etcd = try await SharedEtcd.start()
    let prefix = uniqueKey()
    let executable = try ChildProcess.locateExecutable().deletingLastPathComponent()
      .appendingPathComponent("tether-etcd-child")
    let child = try ChildProcess(
      ["watch-many", etcd.endpointList, prefix, "200"], executableURL: executable)
    defer { child.kill() }
    let line = try await child.waitForLine(containing: "counts", timeout: .seconds(60))
    let counts = line.split(separator: " ").dropFirst().compactMap { Int($0) }
    try #require(counts.count == 4, "\(line)")
    let threads = counts[2] - counts[0]
    let sockets = counts[3] - counts[1]
    print("200 etcd keys: +\(threads) threads, +\(sockets) sockets (\(line))")
    #expect(sockets <= 16, "200 keys opened \(sockets) more sockets")
    // The plain-http transport runs one thread per stream; with the streams shared that is
    // one thread for all 200 keys, so this bound holds on today's transport as well.
    #expect(threads <= 8, "200 keys run \(threads) more threads")
    // A change to an arbitrary one of them reaches its holder.
    for index in [Int.random(in: 0..<200), 199] {
      let value = Int.random(in: 1...1000)
      await etcd.put("\(prefix)/\(index)", "\(value)")
      try await child.waitForLine("value \(index) \(value)", timeout: .seconds(10))
    }
  }
}
