import Foundation
import TestSupport
import Testing
import Tether
import TetherEtcd

/// Issue 32, item 6, on a real etcd started with a larger `--max-request-bytes`: values over
/// etcd's default 1.5 MiB request limit reach holders; one over a key's `maximumValueSize`
/// is reported as `EtcdValueTooLarge`; one too large for the cluster's connections
/// does not stop the shared watch stream for other keys.
@Suite(.enabled(if: etcdInstalled, "etcd is not installed"), .serialized)
struct EtcdLargeValueTests {
  /// Writes `value` at `key` as another client would, waiting as long as etcd takes.
  static func put(_ server: EtcdServer, _ key: String, _ value: String) async throws {
    let body =
      #"{"key":"\#(Data(key.utf8).base64EncodedString())","value":"\#(Data(value.utf8).base64EncodedString())"}"#
    let client = try LoopbackClient(port: server.members[0].clientPort)
    defer { client.close() }
    try client.send(
      "POST /v3/kv/put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
    let answer = try await client.readUntilClosed(timeout: .seconds(120))
    #expect(String(decoding: answer.prefix(12), as: UTF8.self) == "HTTP/1.1 200")
  }

  @Test func aValueOverEtcdsDefaultLimitReachesHoldersAndOneOverTheKeysLimitIsReported()
    async throws
  {
    let server = try await EtcdServer.start(arguments: ["--max-request-bytes", "\(4 << 20)"])
    defer { server.stop() }
    let key = uniqueKey()
    try await Self.put(server, key, "\"small\"")
    @Shared(.etcd(key, in: client(server))) var holder = ""
    @Shared(.etcd(key, in: client(server), maximumValueSize: 2 << 20)) var limited = ""
    try await waitUntil("loaded", timeout: .seconds(10)) {
      holder == "small" && limited == "small"
    }
    let size = 3_000_000
    try await Self.put(server, key, "\"" + String(repeating: "x", count: size) + "\"")
    try await waitUntil("the holder has the 3 MB value", timeout: .seconds(60)) {
      holder.count == size
    }
    #expect($holder.loadError == nil)
    try await waitUntil("the limited holder reports it", timeout: .seconds(30)) {
      ($limited.loadError as? EtcdValueTooLarge)
        == EtcdValueTooLarge(key: key, size: size + 2, limit: 2 << 20)
    }
    #expect(limited == "small")
    try await Self.put(server, key, "\"after\"")
    try await waitUntil("both have the next value", timeout: .seconds(30)) {
      holder == "after" && limited == "after" && $limited.loadError == nil
    }
  }

  /// A 52 MB value (about 69 MB on the wire, over the 64 MiB a cluster's connections read):
  /// before, the shared watch stream failed on it after every re-open, for every key.
  @Test func aValueTooLargeForTheConnectionsDoesNotStopTheWatchOfOtherKeys() async throws {
    let server = try await EtcdServer.start(arguments: ["--max-request-bytes", "\(80 << 20)"])
    defer { server.stop() }
    let huge = uniqueKey() + "/huge"
    let other = uniqueKey() + "/other"
    let cluster = client(server)
    try await Self.put(server, huge, "\"small\"")
    @Shared(.etcd(huge, in: cluster)) var hugeValue = ""
    @Shared(.etcd(other, in: cluster)) var otherValue = 0
    try await waitUntil("loaded", timeout: .seconds(10)) {
      hugeValue == "small" && !$otherValue.isLoading
    }
    try await Self.put(server, huge, "\"" + String(repeating: "x", count: 52_000_000) + "\"")
    try await waitUntil("the holder of the huge key hears of it", timeout: .seconds(60)) {
      $hugeValue.loadError != nil
    }
    #expect(hugeValue == "small")
    // The stream goes on for the other key.
    try await Self.put(server, other, "1")
    try await waitUntil("the other key's change arrives", timeout: .seconds(30)) {
      otherValue == 1
    }
    // And for the huge key, once it holds a value the connections carry again.
    try await Self.put(server, huge, "\"after\"")
    try await waitUntil("the huge key's next value arrives", timeout: .seconds(60)) {
      hugeValue == "after" && $hugeValue.loadError == nil
    }
  }
}
