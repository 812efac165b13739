import Foundation
import TestSupport
import Testing
import Tether
import TetherTesting

@testable import TetherEtcd

/// `.etcd` keys in an isolated scope, on `InMemoryEtcd`: the behaviours `EtcdKeyTests` checks
/// on a real cluster — conflicts, an exact `update`, lease expiry — with no server at all.
@Suite(.isolatedSharedState) struct InMemoryEtcdTests {
  /// A cluster value naming endpoints nothing listens on: any request to them would fail.
  static func machine() -> EtcdCluster {
    EtcdCluster(
      endpoints: [URL(string: "http://etcd-1.invalid:2379")!], timeout: .seconds(2),
      watchCheckInterval: .seconds(1))
  }

  @Test func aSaveReachesTheStoreAndAnotherMachinesHolder() async throws {
    let (one, two) = (Self.machine(), Self.machine())
    let etcd = InMemoryEtcd.standingIn(for: one)
    @Shared(.etcd("/app/flags", in: one)) var mine = Flags()
    @Shared(.etcd("/app/flags", in: two)) var theirs = Flags()
    try await waitUntil("both loaded") { !$mine.isLoading && !$theirs.isLoading }

    $mine.withLock { $0 = Flags(maintenance: true, note: "deploy") }
    try await waitUntil("the other holder sees it") {
      theirs == Flags(maintenance: true, note: "deploy")
    }
    #expect(etcd.stored("/app/flags") == #"{"maintenance":true,"note":"deploy"}"#)
    #expect($mine.saveError == nil)

    $theirs.withLock { $0.note = "done" }
    try await waitUntil("the first holder sees it") { mine.note == "done" }
  }

  @Test func seededValuesLoadAndDeletionsReturnHoldersToTheDefault() async throws {
    let cluster = Self.machine()
    let etcd = InMemoryEtcd.standingIn(for: cluster)
    etcd.put("/count", "42")
    @Shared(.etcd("/count", in: cluster)) var stored = 0
    @Shared(.etcd("/missing", in: cluster)) var missing = 7
    try await $stored.load()
    try await $missing.load()
    #expect(stored == 42)
    #expect(missing == 7)
    #expect($missing.loadError == nil)

    for n in 43...45 { etcd.put("/count", "\(n)") }
    try await waitUntil("the last external write") { stored == 45 }
    etcd.delete("/count")
    try await waitUntil("back to the default") { stored == 0 }
  }

  @Test func eachTestStartsWithAnEmptyStore() {
    let etcd = InMemoryEtcd.standingIn(for: Self.machine())
    #expect(etcd.keys.isEmpty)
    #expect(etcd.revision == 1)
  }

  @Test func concurrentWritersFromOneVersionConflictAndNeitherOverwritesSilently() async throws {
    let (one, two) = (Self.machine(), Self.machine())
    let etcd = InMemoryEtcd.standingIn(for: one)
    etcd.put("/owner", #""base""#)
    @Shared(.etcd("/owner", in: one)) var a = ""
    @Shared(.etcd("/owner", in: two)) var b = ""
    try await waitUntil("both loaded") { a == "base" && b == "base" }

    $a.withLock { $0 = "from a" }
    $b.withLock { $0 = "from b" }
    try await waitUntil("one conflict") { ($a.saveError != nil) != ($b.saveError != nil) }
    let winner = $a.saveError != nil ? "from b" : "from a"
    let error = try #require(($a.saveError ?? $b.saveError) as? EtcdError)
    #expect(error == .conflict(key: "/owner"))
    #expect(etcd.stored("/owner") == "\"\(winner)\"")
    try await waitUntil("both hold the winner") { a == winner && b == winner }
  }

  @Test func aStaleWriterGetsAConflictAndTheNewerValue() async throws {
    let cluster = Self.machine()
    let etcd = InMemoryEtcd.standingIn(for: cluster)
    // A decoder that refuses the other writer's value keeps this holder on the old version.
    @Shared(
      .etcd(
        "/note", in: cluster,
        decode: { @Sendable data -> String in
          let text = String(decoding: data, as: UTF8.self)
          if text.hasPrefix("newer") { throw EtcdError.invalidResponse("refused") }
          return text
        }, encode: { @Sendable in Data($0.utf8) }))
    var stale = "old"
    try await waitUntil("loaded") { !$stale.isLoading }
    $stale.withLock { $0 = "first" }
    try await waitUntil("saved") { etcd.stored("/note") == "first" }
    etcd.put("/note", "newer (another machine)")
    try await waitUntil("the refused version was seen") { $stale.loadError != nil }

    $stale.withLock { $0 = "stale change" }
    try await waitUntil("a conflict") {
      ($stale.saveError as? EtcdError) == .conflict(key: "/note")
    }
    #expect(etcd.stored("/note") == "newer (another machine)")
  }

  @Test func lastWriterWinsOverwritesWithoutAConflict() async throws {
    let cluster = Self.machine()
    let etcd = InMemoryEtcd.standingIn(for: cluster)
    @Shared(.etcd("/value", in: cluster, writePolicy: .lastWriterWins)) var value = ""
    try await waitUntil("loaded") { !$value.isLoading }
    etcd.put("/value", #""theirs""#)
    $value.withLock { $0 = "mine" }
    try await waitUntil("mine stored") { etcd.stored("/value") == #""mine""# }
    #expect($value.saveError == nil)
  }

  @Test func updateIsExactForConcurrentMachines() async throws {
    let machines = (0..<3).map { _ in Self.machine() }
    let etcd = InMemoryEtcd.standingIn(for: machines[0])
    let counters = machines.map { Shared(wrappedValue: 0, .etcd("/visits", in: $0)) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for counter in counters {
        group.addTask { for _ in 0..<20 { try await counter.update { $0 += 1 } } }
      }
      try await group.waitForAll()
    }
    #expect(etcd.stored("/visits") == "60")
    try await waitUntil("every holder at 60") { counters.allSatisfy { $0.wrappedValue == 60 } }
  }

  @Test func updateThrowsWhatTheBodyThrowsAndStoresNothing() async throws {
    let cluster = Self.machine()
    let etcd = InMemoryEtcd.standingIn(for: cluster)
    @Shared(.etcd("/value", in: cluster)) var value = 1
    struct Refused: Error {}
    await #expect(throws: Refused.self) { try await $value.update { _ in throw Refused() } }
    #expect(etcd.stored("/value") == nil)
  }

  @Test func aLeaseExpiresOnTheTestClockAndHoldersReturnToTheDefault() async throws {
    let (writer, reader) = (Self.machine(), Self.machine())
    let etcd = InMemoryEtcd.standingIn(for: writer)
    @Shared(.etcd("/presence/worker-1", in: writer, lease: .seconds(10))) var alive = "absent"
    @Shared(.etcd("/presence/worker-1", in: reader)) var seen = "absent"
    try await waitUntil("both loaded") { !$alive.isLoading && !$seen.isLoading }
    $alive.withLock { $0 = "alive" }
    try await waitUntil("the other machine sees it") { seen == "alive" }
    #expect(etcd.leaseCount == 1)

    // Within the TTL nothing expires, whatever the real clock does.
    etcd.advanceClock(by: .seconds(9))
    #expect(etcd.stored("/presence/worker-1") == #""alive""#)

    // A jump past the TTL: the writer was cut off too long, as if it had died.
    etcd.advanceClock(by: .seconds(11))
    #expect(etcd.stored("/presence/worker-1") == nil)
    #expect(etcd.leaseCount == 0)
    try await waitUntil("every holder back to the default") {
      seen == "absent" && alive == "absent"
    }
  }

  @Test func aLeasedValueVanishesWhenItsLastHolderGoesAway() async throws {
    let cluster = Self.machine()
    let etcd = InMemoryEtcd.standingIn(for: cluster)
    do {
      @Shared(.etcd("/presence/worker-2", in: cluster, lease: .seconds(30))) var alive = ""
      try await waitUntil("loaded") { !$alive.isLoading }
      $alive.withLock { $0 = "alive" }
      try await waitUntil("stored") { etcd.stored("/presence/worker-2") != nil }
    }
    try await waitUntil("revoked with its holder") {
      etcd.stored("/presence/worker-2") == nil && etcd.leaseCount == 0
    }
  }

  @Test func aTestMayUseTheRealClusterInsteadAndNeverTouchesTheStore() async throws {
    let real = EtcdCluster(
      endpoints: [URL(string: "http://127.0.0.1:1")!], timeout: .milliseconds(300))
    let etcd = InMemoryEtcd.standingIn(for: real)
    InMemoryEtcd.useRealCluster(real)
    @Shared(.etcd("/value", in: real)) var value = 5
    try await waitUntil("the real cluster's failure") { $value.loadError != nil }
    guard case .unavailable? = $value.loadError as? EtcdError else {
      Issue.record(
        "expected the real cluster to be unavailable, got \(String(describing: $value.loadError))")
      return
    }
    #expect(etcd.revision == 1)
    #expect(value == 5)
  }

  @Test func aSecondKeyValueForTheSameKeyUsesTheReferenceAndBuildsNoStore() async throws {
    let cluster = Self.machine()
    let etcd = InMemoryEtcd.standingIn(for: cluster)
    let first: EtcdKey<Int> = .etcd("/count", in: cluster)
    let second: EtcdKey<Int> = .etcd("/count", in: cluster)
    @Shared(first) var a = 0
    @Shared(second) var b = 0
    try await waitUntil("loaded") { !$a.isLoading }
    $b.withLock { $0 = 5 }
    try await waitUntil("saved through the reference") { etcd.stored("/count") == "5" }
    #expect(a == 5)
    // The registry kept the first key; the second was only used to find its reference.
    #expect(first.lazyStore.isBuilt)
    #expect(!second.lazyStore.isBuilt)
  }
}

/// What `withSharedStorage(.isolated)` does with `.etcd` keys in a program that does not link
/// TetherTesting (`tether-etcd-child` links only Tether and TetherEtcd).
@Suite struct IsolatedScopeWithoutTetherTestingTests {
  @Test func anEtcdKeyFailsWithATypedErrorAndNeverReachesTheNetwork() async throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    let executable = try ChildProcess.locateExecutable().deletingLastPathComponent()
      .appendingPathComponent("tether-etcd-child")
    let child = try ChildProcess(
      ["isolated", server.url(for: "/").absoluteString, "/app/flag", "20"],
      executableURL: executable)
    // After the cluster's 5 s timeout: the refusal is retried as any unreachable member is.
    let line = try await child.waitForLine(containing: "error ", timeout: .seconds(40))
    #expect(line.contains("etcd is unavailable"))
    #expect(line.contains("link TetherTesting"))
    #expect(server.requestCount == 0)
  }
}
