import Foundation
import TestSupport
import Testing
import Tether
import TetherEtcd
import TetherRemoteConfig

@Suite(.enabled(if: etcdInstalled, "etcd is not installed"))
struct EtcdConfigSourceTests {
  @Test func entriesUnderThePrefixArePushedAsSoonAsTheyAreCommitted() async throws {
    let etcd = try await SharedEtcd.start()
    let prefix = uniqueKey() + "/"
    await etcd.put(prefix + "welcome_title", #""Hello""#)
    await etcd.put(prefix + "max_items", "3")
    await etcd.put(prefix + "plain", "not json")
    await etcd.put(prefix.dropLast() + "-sibling", "1")
    let config = RemoteConfig(source: EtcdConfigSource(prefix: prefix, in: client(etcd)))
    try await config.fetchAndActivate()
    #expect(config.activeKeys == ["welcome_title", "max_items", "plain"])
    #expect(config.configValue(forKey: "welcome_title").stringValue == "Hello")
    #expect(config.configValue(forKey: "max_items").numberValue == 3)
    #expect(config.configValue(forKey: "plain").stringValue == "not json")

    // No polling: the watch makes the config fetch and activate.
    await etcd.put(prefix + "max_items", "4")
    try await waitUntil("the pushed change", timeout: .seconds(10)) {
      config.configValue(forKey: "max_items").numberValue == 4
    }
    await etcd.delete(prefix + "plain")
    try await waitUntil("the deletion", timeout: .seconds(10)) {
      !config.activeKeys.contains("plain")
    }
    #expect(!config.isPolling)
  }

  @Test func theReceiptsThatUpdateLeavesBesideAnEtcdKeyAreNotEntries() async throws {
    let etcd = try await SharedEtcd.start()
    let prefix = uniqueKey() + "/"
    let cluster = client(etcd)
    @Shared(.etcd(prefix + "visits", in: cluster)) var visits = 0
    try await waitUntil("loaded") { !$visits.isLoading }
    // `update` writes a receipt key beside the value's and keeps it while the key is held.
    try await $visits.update { $0 += 1 }
    let config = RemoteConfig(source: EtcdConfigSource(prefix: prefix, in: cluster))
    try await config.fetchAndActivate()
    #expect(config.activeKeys == ["visits"])
    #expect(config.configValue(forKey: "visits").numberValue == 1)
    #expect(visits == 1)
  }
}
