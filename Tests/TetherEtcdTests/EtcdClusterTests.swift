import Foundation
import TestSupport
import Testing
import Tether
import TetherEtcd

/// A three-member cluster on loopback: members die, pause and come back mid-traffic.
// Serialized: three members each, on two cores.
// Heavy: its leader-kill test has second-scale bounds that the CPU-loading tests can break.
@Suite(.enabled(if: etcdInstalled, "etcd is not installed"), .serialized, .heavy)
struct EtcdClusterTests {
  /// The values a watcher saw after its initial one.
  static func changes(_ recorder: Recorder<Int>) -> [Int] {
    Array(recorder.all.drop { $0 == 0 })
  }

  @Test func writesContinueWhenTheLeaderIsKilledAndEveryWatcherSeesEveryRevisionOnce()
    async throws
  {
    let etcd = try await EtcdServer.start(members: 3)
    let key = uniqueKey()
    let leader = try #require(await etcd.leader())
    @Shared(.etcd(key, in: client(etcd))) var counter = 0
    // Each watcher starts on a different member, so one of them is on the leader.
    let watchers = (0..<3).map { first in
      Shared(wrappedValue: 0, .etcd(key, in: client(etcd, endpoints: [first, (first + 1) % 3])))
    }
    let recorders = watchers.map { Recorder($0) }
    try await waitUntil("loaded") { !$counter.isLoading && watchers.allSatisfy { !$0.isLoading } }
    for step in 1...40 {
      if step == 15 { etcd.kill(member: leader) }
      try await $counter.update { $0 += 1 }
    }
    #expect(await etcd.stored(key) == "40")
    for (index, watcher) in watchers.enumerated() where index != leader {
      try await waitUntil("watcher \(index) at 40", timeout: .seconds(20)) {
        watcher.wrappedValue == 40
      }
    }
    // The watcher that started on the dead leader moved to its second endpoint.
    try await waitUntil("the leader's watcher at 40", timeout: .seconds(20)) {
      watchers[leader].wrappedValue == 40
    }
    for recorder in recorders { #expect(Self.changes(recorder) == Array(1...40)) }
  }

  @Test func aPausedMembersSilentWatchMovesToAnotherMemberWithoutLoss() async throws {
    let etcd = try await EtcdServer.start(members: 3)
    let key = uniqueKey()
    let leader = try #require(await etcd.leader())
    let paused = (leader + 1) % 3
    let others = (0..<3).filter { $0 != paused }
    @Shared(.etcd(key, in: client(etcd, endpoints: others))) var counter = 0
    @Shared(.etcd(key, in: client(etcd, endpoints: [paused] + others))) var watcher = 0
    let recorder = Recorder($watcher)
    try await waitUntil("loaded") { !$counter.isLoading && !$watcher.isLoading }
    etcd.pause(member: paused)
    defer { etcd.resume(member: paused) }
    for _ in 1...10 { try await $counter.update { $0 += 1 } }
    // Silent for the check interval (1 s), then no answer within the timeout (2 s): moved.
    try await waitUntil("the watcher at 10", timeout: .seconds(20)) { watcher == 10 }
    // Every change arrives (in one burst after the move); the holder's publisher may show a
    // burst's values coalesced, but never one twice or out of order.
    let seen = Self.changes(recorder)
    #expect(seen.last == 10)
    #expect(seen == seen.sorted() && Set(seen).count == seen.count)
  }

  @Test func aWatcherWhoseRevisionWasCompactedRecoversTheCurrentValue() async throws {
    let etcd = try await EtcdServer.start(members: 3)
    let key = uniqueKey()
    let leader = try #require(await etcd.leader())
    let follower = (leader + 1) % 3
    let others = (0..<3).filter { $0 != follower }
    @Shared(.etcd(key, in: client(etcd, endpoints: others))) var counter = 0
    // Only the follower: while it is paused this watcher cannot follow anything.
    @Shared(.etcd(key, in: client(etcd, endpoints: [follower]))) var watcher = 0
    try await waitUntil("loaded") { !$counter.isLoading && !$watcher.isLoading }
    $counter.withLock { $0 = 1 }
    try await waitUntil("the first change", timeout: .seconds(10)) { watcher == 1 }
    // A paused member: its watch stays open and silent, which the watcher must notice.
    etcd.pause(member: follower)
    defer { etcd.resume(member: follower) }
    for _ in 1...5 { try await $counter.update { $0 += 1 } }
    let header =
      await etcd.post(etcd.members[leader], "/v3/kv/range", #"{"key":"AA=="}"#)?[
        "header"] as? [String: Any]
    let revision = try #require(header?["revision"] as? String)
    let compacted = await etcd.post(
      etcd.members[leader], "/v3/kv/compaction", #"{"revision":"\#(revision)"}"#)
    #expect(compacted != nil)
    try await waitUntil("the watch failing", timeout: .seconds(20)) { $watcher.loadError != nil }
    etcd.resume(member: follower)
    try await waitUntil("the current value", timeout: .seconds(30)) { watcher == 6 }
    try await waitUntil("no error left", timeout: .seconds(10)) { $watcher.loadError == nil }
  }

  @Test func offlineChangesAreKeptReportedAndTheNewestIsWrittenOnceTheClusterIsBack()
    async throws
  {
    let etcd = try await EtcdServer.start()
    let key = uniqueKey()
    @Shared(.etcd(key, in: client(etcd))) var counter = 0
    try await waitUntil("loaded") { !$counter.isLoading }
    $counter.withLock { $0 = 1 }
    try await waitUntil("the first save", timeout: .seconds(10)) { await etcd.stored(key) == "1" }

    etcd.kill(member: 0)
    $counter.withLock { $0 = 2 }
    try await waitUntil("the failed save reported", timeout: .seconds(10)) {
      $counter.saveError != nil
    }
    guard case .unavailable? = $counter.saveError as? EtcdError else {
      Issue.record("expected unavailable, got \(String(describing: $counter.saveError))")
      return
    }
    $counter.withLock { $0 = 3 }
    #expect(counter == 3, "the holder keeps its value while the cluster is away")

    try await etcd.restart(member: 0)
    try await waitUntil("the newest value written", timeout: .seconds(30)) {
      await etcd.stored(key) == "3"
    }
    // The background write that landed is the save's outcome: `saveError` no longer says
    // `unavailable` (issue 22: it stayed until the next save).
    try await waitUntil("the error cleared by the write that landed", timeout: .seconds(5)) {
      $counter.saveError == nil
    }
    // Another machine loads what was written; nothing older came back.
    @Shared(.etcd(key, in: client(etcd))) var elsewhere = 0
    try await waitUntil("loaded elsewhere", timeout: .seconds(10)) { elsewhere == 3 }
    #expect(counter == 3)
    $counter.withLock { $0 = 4 }
    try await waitUntil("a save that lands clears the error", timeout: .seconds(10)) {
      $counter.saveError == nil && elsewhere == 4
    }
  }

  /// Enables auth with `root` and `alice`, whose role may read and write keys under `/app/`.
  private func enableAuth(_ etcd: EtcdServer) async {
    let setup = [
      ("/v3/auth/user/add", #"{"name":"root","password":"rootpw"}"#),
      ("/v3/auth/user/grant", #"{"user":"root","role":"root"}"#),
      ("/v3/auth/role/add", #"{"name":"app"}"#),
      (
        "/v3/auth/role/grant",
        #"{"name":"app","perm":{"key":"\#(Data("/app/".utf8).base64EncodedString())","range_end":"\#(Data("/app0".utf8).base64EncodedString())","permType":"READWRITE"}}"#
      ),
      ("/v3/auth/user/add", #"{"name":"alice","password":"secret"}"#),
      ("/v3/auth/user/grant", #"{"user":"alice","role":"app"}"#),
      ("/v3/auth/enable", "{}"),
    ]
    for (path, body) in setup { #expect(await etcd.anyMember(path, body) != nil, "\(path)") }
  }

  @Test func anInvalidatedTokenIsReplacedAndTheWriteRepeated() async throws {
    let etcd = try await EtcdServer.start()
    await enableAuth(etcd)
    @Shared(.etcd("/app/counter", in: client(etcd, username: "alice", password: "secret")))
    var counter = 0
    @Shared(.etcd("/app/counter", in: client(etcd, username: "alice", password: "secret")))
    var elsewhere = 0
    try await waitUntil("loaded") { !$counter.isLoading && !$elsewhere.isLoading }
    $counter.withLock { $0 = 1 }
    try await waitUntil("the first save", timeout: .seconds(10)) { elsewhere == 1 }

    // Setting alice's password (to the same one) invalidates every token she holds, as an
    // expired token would be: the next request is refused with "invalid auth token".
    let root = await etcd.post(
      etcd.members[0], "/v3/auth/authenticate", #"{"name":"root","password":"rootpw"}"#)
    let token = try #require(root?["token"] as? String)
    let changed = await etcd.post(
      etcd.members[0], "/v3/auth/user/changepw", #"{"name":"alice","password":"secret"}"#,
      token: token)
    #expect(changed != nil)

    $counter.withLock { $0 = 2 }
    try await waitUntil("the save after a new token", timeout: .seconds(10)) { elsewhere == 2 }
    #expect($counter.saveError == nil)
  }

  @Test func authWithAUserAndARole() async throws {
    let etcd = try await EtcdServer.start()
    await enableAuth(etcd)
    let alice = client(etcd, username: "alice", password: "secret")
    @Shared(.etcd("/app/flag", in: alice)) var flag = false
    @Shared(.etcd("/app/flag", in: client(etcd, username: "alice", password: "secret")))
    var elsewhere = false
    try await waitUntil("loaded") { !$flag.isLoading && !$elsewhere.isLoading }
    #expect($flag.loadError == nil)
    $flag.withLock { $0 = true }
    try await waitUntil("the watched change", timeout: .seconds(10)) { elsewhere }
    // `update` writes its receipt beside the key: inside the role's range too.
    #expect(
      try await $elsewhere.update {
        $0.toggle(); return $0
      } == false)
    try await waitUntil("the updated value", timeout: .seconds(10)) { !flag }

    // Refusals come with HTTP trailers (`Trailer: Grpc-Trailer-Content-Type`), on which
    // URLSession on Linux traps; over the socket transport they are typed errors.
    @Shared(.etcd("/other/flag", in: alice)) var outside = false
    try await waitUntil("the refusal", timeout: .seconds(10)) { $outside.loadError != nil }
    guard case .authenticationFailed(let refusal)? = $outside.loadError as? EtcdError else {
      Issue.record("expected a permission error, got \(String(describing: $outside.loadError))")
      return
    }
    #expect(refusal.contains("permission denied"))
    let mallory = client(etcd, username: "alice", password: "wrong")
    @Shared(.etcd("/app/flag", in: mallory)) var denied = false
    try await waitUntil("the wrong password", timeout: .seconds(10)) { $denied.loadError != nil }
    guard case .authenticationFailed(let message)? = $denied.loadError as? EtcdError else {
      Issue.record("expected an authentication error, got \(String(describing: $denied.loadError))")
      return
    }
    #expect(message.contains("authentication failed"))
    #expect(!"\(alice)".contains("secret"))
    #expect(!"\($denied.loadError!)".contains("wrong"))
  }
}
