import Foundation
import Streams
import Tether
import TetherEtcd

// The second real process the etcd tests launch:
//   tether-etcd-child increment ENDPOINTS KEY COUNT   `update` +1 COUNT times, then "done"
//   tether-etcd-child hold ENDPOINTS KEY TTL          write "alive" under a lease, "held", wait
//   tether-etcd-child watch-many ENDPOINTS PREFIX N   hold N Int keys PREFIX/0…, print
//     "counts THREADS SOCKETS THREADS SOCKETS" (before, after), then "value I V" per change
//   tether-etcd-child spin-increment ENDPOINTS KEY MS hold an Int key; print "ready VALUE"
//     once loaded; on the line "go", withLock { print "spinning"; busy MS ms; $0 += 1 }, print
//     "spun"; then "result VALUE ERROR" once saveError is set (ERROR: conflict, other: …) or
//     after 5 s without one (ERROR: none)
//   tether-etcd-child set ENDPOINTS KEY VALUE  hold an Int key; print "ready VALUE" once
//     loaded; on "go", withLock { $0 = VALUE } and print "saved" once etcd holds it
//   tether-etcd-child isolated ENDPOINTS KEY SECONDS  hold an Int key inside
//     withSharedStorage(.isolated) in this process, which does not link TetherTesting; print
//     "error DESCRIPTION" once its loadError is set (or "error none" after SECONDS)
// ENDPOINTS is a comma-separated list of client URLs.
let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 4, let number = Int(arguments[3]) else {
  FileHandle.standardError.write(
    Data(
      ("usage: tether-etcd-child increment|hold|watch-many|spin-increment|set|isolated "
        + "ENDPOINTS KEY NUMBER\n").utf8))
  exit(2)
}
let cluster = EtcdCluster(
  endpoints: arguments[1].split(separator: ",").compactMap { URL(string: String($0)) })
let key = arguments[2]

/// Writes `line` unbuffered, so the test sees it while this process waits to be killed.
@Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
do {
  switch arguments[0] {
  case "increment":
    @Shared(.etcd(key, in: cluster)) var counter = 0
    say("ready")
    for _ in 0..<number { try await $counter.update { $0 += 1 } }
    say("done")
  case "hold":
    @Shared(.etcd(key, in: cluster, lease: .seconds(number))) var presence = ""
    try await $presence.update { $0 = "alive" }
    say("held")
    // Holds the lease (its keep-alive runs in the key's own task) until the test kills this
    // process: suspended on nothing, never resumed, rather than a timer.
    await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
  case "spin-increment":
    @Shared(.etcd(key, in: cluster)) var value = 0
    while $value.isLoading { try await Task.sleep(for: .milliseconds(5)) }
    say("ready \(value)")
    guard readLine() == "go" else { exit(2) }
    $value.withLock { value in
      say("spinning")
      let end = ContinuousClock.now + .milliseconds(number)
      while ContinuousClock.now < end {}
      value += 1
    }
    say("spun")
    let deadline = ContinuousClock.now + .seconds(5)
    while $value.saveError == nil, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    let outcome =
      switch $value.saveError {
      case nil: "none"
      case EtcdError.conflict?: "conflict"
      case let error?: "other: \(error)"
      }
    say("result \(value) \(outcome)")
  case "set":
    @Shared(.etcd(key, in: cluster)) var value = 0
    while $value.isLoading { try await Task.sleep(for: .milliseconds(5)) }
    say("ready \(value)")
    guard readLine() == "go" else { exit(2) }
    $value.withLock { $0 = number }
    // Done when a fresh read of the cluster finds it (the holder's own save is asynchronous).
    @SharedReader(.etcd(key, in: EtcdCluster(endpoints: cluster.endpoints))) var check = 0
    while check != number {
      try await $check.load()
      if check != number { try await Task.sleep(for: .milliseconds(5)) }
    }
    say("saved")
  case "isolated":
    try await withSharedStorage(.isolated) {
      @Shared(.etcd(key, in: cluster)) var value = 0
      let deadline = ContinuousClock.now + .seconds(number)
      while $value.loadError == nil, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(10))
      }
      say("error \($value.loadError.map { "\($0)" } ?? "none")")
    }
  case "watch-many":
    let before = resources()
    let keys = (0..<number).map { Shared(wrappedValue: 0, .etcd("\(key)/\($0)", in: cluster)) }
    let sinks = keys.enumerated().map { index, shared in
      shared.publisher.dropFirst().sink { say("value \(index) \($0)") }
    }
    while keys.contains(where: \.isLoading) { try await Task.sleep(for: .milliseconds(10)) }
    // Every key is loaded; the watches are opened in one batch right after. Dispatch threads
    // that served the loads wind down within seconds: the count is the settled one (it stops
    // as soon as the bound holds, or after 10 s).
    var after = resources()
    let settle = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < settle
      && (after.threads > before.threads + 8
        || after.sockets > before.sockets + 16 || after.sockets <= before.sockets)
    {
      try await Task.sleep(for: .milliseconds(100))
      after = resources()
    }
    say("counts \(before.threads) \(before.sockets) \(after.threads) \(after.sockets)")
    await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
    withExtendedLifetime((keys, sinks)) {}
  default:
    FileHandle.standardError.write(Data("unknown command \(arguments[0])\n".utf8))
    exit(2)
  }
  exit(0)
} catch {
  FileHandle.standardError.write(Data("tether-etcd-child: \(error)\n".utf8))
  exit(1)
}

/// This process's threads and open sockets.
func resources() -> (threads: Int, sockets: Int) {
  let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count
  let sockets = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [])
    .filter {
      ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) ?? "")
        .hasPrefix("socket:")
    }.count
  return (threads ?? 0, sockets)
}
