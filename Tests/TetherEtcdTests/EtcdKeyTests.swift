import Foundation
import TestSupport
import Testing
import Tether
import TetherEtcd

struct Flags: Codable, Equatable, Sendable {
  var maintenance = false
  var note = ""
}

@Suite(.enabled(if: etcdInstalled, "etcd is not installed"))
struct EtcdKeyTests {
  @Test func aSaveReachesEtcdAndAnotherMachinesHolder() async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey()
    @Shared(.etcd(key, in: client(etcd))) var mine = Flags()
    @Shared(.etcd(key, in: client(etcd))) var theirs = Flags()
    try await waitUntil("both loaded") { !$mine.isLoading && !$theirs.isLoading }
    $mine.withLock { $0 = Flags(maintenance: true, note: "deploy") }
    try await waitUntil("the other holder sees it", timeout: .seconds(10)) {
      theirs == Flags(maintenance: true, note: "deploy")
    }
    #expect(await etcd.stored(key) == #"{"maintenance":true,"note":"deploy"}"#)
    #expect($mine.saveError == nil)

    // And back: the other machine's change reaches the first.
    $theirs.withLock { $0.note = "done" }
    try await waitUntil("the first holder sees it", timeout: .seconds(10)) { mine.note == "done" }
  }

  @Test func aStoredValueIsLoadedAndAMissingKeyIsTheDefault() async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey()
    await etcd.put(key, "42")
    @Shared(.etcd(key, in: client(etcd))) var stored = 0
    @Shared(.etcd(uniqueKey(), in: client(etcd))) var missing = 7
    try await waitUntil("loaded", timeout: .seconds(10)) { stored == 42 }
    try await $missing.load()
    #expect(missing == 7)
    #expect($missing.loadError == nil)
  }

  @Test func aDeletedKeyReturnsHoldersToTheDefault() async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey()
    await etcd.put(key, #""set""#)
    @Shared(.etcd(key, in: client(etcd))) var value = "default"
    try await waitUntil("loaded", timeout: .seconds(10)) { value == "set" }
    await etcd.delete(key)
    try await waitUntil("back to the default", timeout: .seconds(10)) { value == "default" }
  }

  @Test func anExternalWriteIsWatchedAndUndecodableBytesKeepTheValue() async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey()
    @Shared(.etcd(key, in: client(etcd))) var count = 0
    try await waitUntil("loaded") { !$count.isLoading }
    for n in 1...5 { await etcd.put(key, "\(n)") }
    try await waitUntil("the last write", timeout: .seconds(10)) { count == 5 }
    await etcd.put(key, "not json")
    try await waitUntil("a decoding error", timeout: .seconds(10)) { $count.loadError != nil }
    #expect(count == 5)
    #expect("\($count.loadError!)".contains(key))
  }

  @Test func concurrentWritersFromOneVersionConflictAndNeitherOverwritesSilently() async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey()
    await etcd.put(key, #""base""#)
    @Shared(.etcd(key, in: client(etcd))) var a = ""
    @Shared(.etcd(key, in: client(etcd))) var b = ""
    try await waitUntil("both loaded", timeout: .seconds(10)) { a == "base" && b == "base" }
    // Both change the same version: exactly one save may land.
    $a.withLock { $0 = "from a" }
    $b.withLock { $0 = "from b" }
    try await waitUntil("one conflict", timeout: .seconds(10)) {
      ($a.saveError != nil) != ($b.saveError != nil)
    }
    let loser = $a.saveError != nil ? "a" : "b"
    let winner = loser == "a" ? "from b" : "from a"
    let error = try #require(($a.saveError ?? $b.saveError) as? EtcdError)
    #expect(error == .conflict(key: key))
    #expect(await etcd.stored(key) == "\"\(winner)\"")
    // The stale writer's holders get the newer value.
    try await waitUntil("both hold the winner", timeout: .seconds(10)) {
      a == winner && b == winner
    }
  }

  @Test func aStaleWriterGetsAConflictAndTheNewerValue() async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey()
    // A custom codec whose decoder refuses the other writer's value keeps this holder on the
    // old version, so its next save is stale by construction.
    @Shared(
      .etcd(
        key, in: client(etcd),
        decode: { @Sendable data -> String in
          let text = String(decoding: data, as: UTF8.self)
          if text.hasPrefix("newer") { throw EtcdError.invalidResponse("refused") }
          return text
        }, encode: { @Sendable in Data($0.utf8) }))
    var stale = "old"
    try await waitUntil("loaded") { !$stale.isLoading }
    $stale.withLock { $0 = "first" }
    try await waitUntil("saved", timeout: .seconds(10)) { await etcd.stored(key) == "first" }
    await etcd.put(key, "newer (another machine)")
    try await waitUntil("the refused version was seen", timeout: .seconds(10)) {
      $stale.loadError != nil
    }
    $stale.withLock { $0 = "stale change" }
    try await waitUntil("a conflict", timeout: .seconds(10)) {
      ($stale.saveError as? EtcdError) == .conflict(key: key)
    }
    #expect(await etcd.stored(key) == "newer (another machine)")
  }

  @Test func lastWriterWinsOverwritesWithoutAConflict() async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey()
    @Shared(.etcd(key, in: client(etcd), writePolicy: .lastWriterWins)) var value = ""
    try await waitUntil("loaded") { !$value.isLoading }
    await etcd.put(key, #""theirs""#)
    $value.withLock { $0 = "mine" }
    try await waitUntil("mine stored", timeout: .seconds(10)) {
      await etcd.stored(key) == #""mine""#
    }
    #expect($value.saveError == nil)
  }

  @Test func updateIsExactForConcurrentHoldersInOneProcess() async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey()
    let counters = (0..<3).map { _ in Shared(wrappedValue: 0, .etcd(key, in: client(etcd))) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for counter in counters {
        group.addTask { for _ in 0..<20 { try await counter.update { $0 += 1 } } }
      }
      try await group.waitForAll()
    }
    #expect(await etcd.stored(key) == "60")
    try await waitUntil("every holder at 60", timeout: .seconds(10)) {
      counters.allSatisfy { $0.wrappedValue == 60 }
    }
  }

  @Test(arguments: [2, 4])
  func updateIsExactAcrossRealProcesses(processes: Int) async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey() + "-\(processes)"
    let executable = try ChildProcess.locateExecutable().deletingLastPathComponent()
      .appendingPathComponent("tether-etcd-child")
    let children = try (0..<processes).map { _ in
      try ChildProcess(
        ["increment", etcd.endpointList, key, "250"], executableURL: executable)
    }
    for child in children { try await child.waitForLine("done", timeout: .seconds(150)) }
    #expect(await etcd.stored(key) == "\(250 * processes)")
  }

  @Test func leaseExpiryAfterTheWriterIsKilledReturnsHoldersToTheDefault() async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey()
    let executable = try ChildProcess.locateExecutable().deletingLastPathComponent()
      .appendingPathComponent("tether-etcd-child")
    let writer = try ChildProcess(["hold", etcd.endpointList, key, "2"], executableURL: executable)
    try await writer.waitForLine("held", timeout: .seconds(20))
    @Shared(.etcd(key, in: client(etcd))) var presence = "absent"
    try await waitUntil("the writer's value", timeout: .seconds(10)) { presence == "alive" }
    let killed = ContinuousClock.now
    writer.kill()
    try await waitUntil("back to the default", timeout: .seconds(25)) { presence == "absent" }
    // The TTL is 2 s; etcd may round a lease up to its minimum and check expiry in steps, and
    // a loaded machine resumes this task seconds late (10.2 s seen on two busy cores). Far
    // below a lease that outlived its writer by etcd's default TTL (60 s).
    #expect(ContinuousClock.now - killed < .seconds(20))
    #expect(await etcd.stored(key) == nil)
  }

  @Test func updateThrowsWhatTheBodyThrowsAndStoresNothing() async throws {
    let etcd = try await SharedEtcd.start()
    let key = uniqueKey()
    @Shared(.etcd(key, in: client(etcd))) var value = 1
    struct Refused: Error {}
    await #expect(throws: Refused.self) {
      try await $value.update { _ in throw Refused() }
    }
    #expect(await etcd.stored(key) == nil)
  }
}
