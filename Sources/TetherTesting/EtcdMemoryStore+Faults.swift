import Foundation
import TetherEtcd
import TetherHTTP
import TetherSupport

/// Write faults a test injects into the in-memory etcd (``InMemoryEtcd/failWrites(_:)``,
/// ``InMemoryEtcd/holdNextWrite()``): writes whose outcome the client cannot know.
struct EtcdMemoryFaults: Sendable {
  /// How many of the next write requests fail without being applied.
  var failing = 0
  /// Whether the next write request is kept, to be applied later.
  var holdNext = false
  /// The write request kept, with its gateway path.
  var held: (path: String, body: EtcdWire.Object)?
}

extension EtcdMemoryStore {
  /// The answer a fault gives a write request (a put, or a transaction that would write), or
  /// `nil` when no fault takes it: 503 "request timed out", which tells the client nothing of
  /// its outcome, as a leader that lost its quorum answers.
  func faultyAnswer(_ path: String, _ body: EtcdWire.Object) -> HTTPResponseMessage? {
    let writes =
      path == "/v3/kv/put"
      || (path == "/v3/kv/txn"
        && EtcdWire.objects(body, "success").contains {
          EtcdWire.child($0, "request_put") != nil
        })
    guard writes else { return nil }
    let taken = faults.withLock { faults -> Bool in
      if faults.holdNext {
        faults.holdNext = false
        faults.held = (path, body)
        return true
      }
      guard faults.failing > 0 else { return false }
      faults.failing -= 1
      return true
    }
    return taken ? Self.failure(503, code: 14, "etcdserver: request timed out") : nil
  }

  /// Applies the write request kept by ``EtcdMemoryFaults/holdNext`` (its compares decide, as
  /// now), as a leader that commits an entry after its client gave up on it.
  func landHeldWrite() {
    let held = faults.withLock { faults in
      defer { faults.held = nil }
      return faults.held
    }
    guard let held else { return }
    _ = answer(held.path, held.body)
  }
}
