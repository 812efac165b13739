import Foundation
import TestSupport
import Tether
import TetherEtcd

// Two processes sharing a counter and a flag through etcd.
//
//   swift run cluster                  starts a local etcd (if installed), or uses
//   ETCD_ENDPOINTS=http://h:2379 swift run cluster
//
// This process starts a second copy of itself ("peer"); both increment the counter with
// `update` (exact across processes), and the peer raises the flag when it is done.

struct Peer {
  @Shared var visits: Int
  @Shared var done: Bool

  init(cluster: EtcdCluster, run: String) {
    _visits = Shared(wrappedValue: 0, .etcd("/tether-example/\(run)/visits", in: cluster))
    _done = Shared(wrappedValue: false, .etcd("/tether-example/\(run)/done", in: cluster))
  }
}

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "peer" {
  // The second process: ENDPOINTS RUN.
  let cluster = EtcdCluster(
    endpoints: arguments[2].split(separator: ",").compactMap {
      URL(string: String($0))
    })
  let peer = Peer(cluster: cluster, run: arguments[3])
  for _ in 0..<50 { try await peer.$visits.update { $0 += 1 } }
  try await peer.$done.update { $0 = true }
  exit(0)
}

var server: EtcdServer?
let endpoints: [URL]
if let list = ProcessInfo.processInfo.environment["ETCD_ENDPOINTS"] {
  endpoints = list.split(separator: ",").compactMap { URL(string: String($0)) }
} else if EtcdServer.executable != nil {
  print("Starting a local etcd…")
  server = try await EtcdServer.start()
  endpoints = server!.clientURLs
} else {
  print("etcd is not installed: install etcd-server, or set ETCD_ENDPOINTS.")
  exit(0)
}

let run = UUID().uuidString
let cluster = EtcdCluster(endpoints: endpoints)
let mine = Peer(cluster: cluster, run: run)
try await mine.$visits.load()

let peer = Process()
peer.executableURL = URL(fileURLWithPath: arguments[0])
peer.arguments = ["peer", endpoints.map(\.absoluteString).joined(separator: ","), run]
try peer.run()

for _ in 0..<50 { try await mine.$visits.update { $0 += 1 } }
print("This process incremented 50 times; waiting for the peer…")
for await done in mine.$done.values where done { break }
try await mine.$visits.load()
print("Counter: \(mine.visits) (expected 100: `update` is exact across processes)")
print("Flag raised by the peer: \(mine.done)")
server?.stop()
