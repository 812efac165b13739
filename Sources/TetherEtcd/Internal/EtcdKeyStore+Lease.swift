import Foundation
import TetherSupport

/// An `.etcd` key's lease: granted on the first write that needs it, renewed while the store
/// lives, revoked with the last holder (`stop()`).
extension EtcdKeyStore {
  /// The lease new writes attach to, granted on first use and renewed while the store lives.
  func currentLease() async throws(EtcdError) -> Int64? {
    guard let leaseTTL else { return nil }
    if let lease = state.withLock({ $0.leaseID }) { return lease }
    var lost = 0
    while true {
      do throws(EtcdError) {
        let lease = try await cluster.grantLease(ttl: leaseTTL)
        let renewal = Task { [weak self] () -> Void in
          await self?.keepAlive(lease, ttl: leaseTTL)
        }
        let previous = state.withLock { state in
          defer {
            state.leaseID = lease
            state.keepAlive = renewal
          }
          return state.keepAlive
        }
        previous?.cancel()
        return lease
      } catch {
        // A grant whose answer was lost only leaves an unused lease behind, which expires.
        guard case .outcomeUnknown = error, lost < 3 else { throw error }
        lost += 1
      }
    }
  }

  private func keepAlive(_ lease: Int64, ttl: Int64) async {
    let period = Duration.milliseconds(max(300, ttl * 1000 / 3))
    while !Task.isCancelled {
      try? await Task.sleep(for: period)
      guard !Task.isCancelled else { return }
      do throws(EtcdError) {
        if try await cluster.keepAlive(lease: lease) == 0 {
          // Expired (the gateway answers without a TTL): the next save grants a new one.
          state.withLock { if $0.leaseID == lease { $0.leaseID = nil } }
          return
        }
      } catch {
        continue
      }
    }
  }
}
