import Foundation
import Tether
import TetherHTTP
import TetherSupport

/// An `.etcd` key's watch: started with the first holder, stopped with the last.
extension EtcdKeyStore {
  /// The back-off of a first read that failed before a watch can start.
  static var readBackoff: Backoff { Backoff(initial: .milliseconds(250), maximum: .seconds(2)) }

  func start(subscriber: SharedSubscriber<Value>) {
    state.withLock { $0.subscriber = subscriber }
    let starting = Task {
      var from = state.withLock { $0.knownAt }
      if from == 0 {
        // Nothing read yet: read once, so the watch starts right after a known state.
        var failures = 0
        while !Task.isCancelled {
          do throws(EtcdError) {
            from = try await read(publishing: true).revision
            break
          } catch {
            subscriber.yield(throwing: error)
            failures += 1
            try? await Task.sleep(for: Self.readBackoff.delay(afterFailures: failures) ?? .zero)
          }
        }
        if Task.isCancelled { return }
      }
      let watcher = EtcdWatcher(
        cluster: cluster, key: key, rangeEnd: nil, startRevision: from + 1,
        handlers: .init(
          deliver: { [weak self] events in
            guard let self else { return }
            for event in events { self.publish(self.observe(event)) }
          },
          resync: { [weak self] () throws(EtcdError) -> Int64 in
            guard let self else { throw .cancelled }
            return try await self.read(publishing: true).revision + 1
          },
          report: { [weak self] error in self?.report(error) }))
      let cancelled = state.withLock { state in
        guard state.subscriber != nil else { return true }
        state.watcher = watcher
        return false
      }
      if cancelled { watcher.cancel() }
    }
    state.withLock { $0.starting = starting }
  }

  /// A failing watch sets `loadError`; when it recovers, the last known value clears it
  /// (unless a local change still waits to be written, which it would undo).
  private func report(_ error: EtcdError?) {
    let (subscriber, newest, stored, pending) = state.withLock { state in
      (state.subscriber, state.newest, state.stored, state.retriesWaiting > 0)
    }
    guard let subscriber else { return }
    if let error { return subscriber.yield(throwing: error) }
    guard !pending, writes.pendingCount == 0, let newest else { return }
    guard let stored else { return publish(.deleted(newest)) }
    if case .success(let value) = value(from: stored) {
      publish(.value(value, newest))
    }
  }

  /// The last holder is gone: stop watching and renewing; once the queued writes are done,
  /// revoke the lease (the value vanishes with its writer) and remove the update receipt.
  func stop() {
    let (watcher, starting, keepAlive) = state.withLock { state in
      defer {
        state.subscriber = nil
        state.watcher = nil
        state.starting = nil
      }
      return (state.watcher, state.starting, state.keepAlive)
    }
    starting?.cancel()
    watcher?.cancel()
    writes.enqueue { [self] in
      keepAlive?.cancel()
      let (lease, receipt) = state.withLock { state in
        defer {
          state.leaseID = nil
          state.keepAlive = nil
        }
        return (state.leaseID, state.wroteReceipt)
      }
      if let lease { try? await cluster.revokeLease(lease) }
      if receipt { _ = try? await cluster.delete(receiptKey) }
    }
  }
}
