/// The one serial write queue of networked keys: asynchronous writes run one at a time, in
/// the order they were enqueued, each starting after the one before it has finished.
///
/// A key's saves must reach its store in mutation order, and a conditional write must know
/// the outcome of the write before it (the version it left) before it is sent. `.http` and
/// `.etcd` keys each keep one of these per value. The queue holds only the newest task: each
/// task awaits its predecessor, so the chain is as long as the writes waiting, and nothing of
/// a finished write is kept.
package final class SerialWriteQueue: Sendable {
  private struct State {
    var last: Task<Void, Never>?
    var pending = 0
  }
  private let state = Lock(State())

  package init() {}

  /// How many enqueued writes have not finished yet.
  package var pendingCount: Int { state.withLock { $0.pending } }

  /// Runs `work` after every write enqueued before it has finished.
  package func enqueue(_ work: @escaping @Sendable () async -> Void) {
    state.withLock { state in
      let previous = state.last
      state.pending += 1
      state.last = Task {
        await previous?.value
        await work()
        self.state.withLock { $0.pending -= 1 }
      }
    }
  }
}
