import Foundation
import Tether
import TetherEtcd

// The second real process the etcd tests launch:
//   tether-etcd-child increment ENDPOINTS KEY COUNT   `update` +1 COUNT times, then "done"
//   tether-etcd-child hold ENDPOINTS KEY TTL          write "alive" under a lease, "held", wait
// ENDPOINTS is a comma-separated list of client URLs.
let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 4, let number = Int(arguments[3]) else {
  FileHandle.standardError.write(
    Data("usage: tether-etcd-child increment|hold ENDPOINTS KEY NUMBER\n".utf8))
  exit(2)
}
let cluster = EtcdCluster(
  endpoints: arguments[1].split(separator: ",").compactMap { URL(string: String($0)) })
let key = arguments[2]

/// Writes `line` unbuffered, so the test sees it while this process waits to be killed.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
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
  default:
    FileHandle.standardError.write(Data("unknown command \(arguments[0])\n".utf8))
    exit(2)
  }
  exit(0)
} catch {
  FileHandle.standardError.write(Data("tether-etcd-child: \(error)\n".utf8))
  exit(1)
}
