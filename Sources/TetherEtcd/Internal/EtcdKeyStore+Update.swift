import Foundation
import Tether
import TetherHTTP
import TetherSupport

/// An `.etcd` key's `update`: compare-and-swap retried until it applies, exactly once.
extension EtcdKeyStore {
  /// How long an `update` goes on retrying, through contention and unavailability alike,
  /// before it throws (``EtcdError/conflict(key:)`` after contention; the failure, or
  /// ``EtcdError/outcomeUnknown(reason:)`` when an attempt may still land, otherwise).
  static var updateDeadline: Duration { .seconds(30) }

  /// The back-off of `update` after a transient failure.
  private static var updateBackoff: Backoff {
    Backoff(initial: .milliseconds(50), maximum: .milliseconds(250))
  }
  /// The jittered back-off between compare-and-swap attempts after conflicts: writers that
  /// collided come back at different times instead of in lockstep.
  private static var contentionBackoff: Backoff {
    Backoff(initial: .milliseconds(1), maximum: .milliseconds(50))
  }

  /// Applies `transform` to the latest stored value with compare-and-swap until it applies.
  ///
  /// Never twice: each attempt writes a fresh token to ``receiptKey`` in the same transaction.
  /// After a lost answer the attempt is remembered; a later read (or the failure branch of a
  /// later attempt) that finds one of those tokens in the receipt means that attempt landed,
  /// and its value is the result. An attempt that lands later than we looked cannot apply
  /// once a newer attempt has changed the key (its compare fails), and if it lands first, the
  /// newer attempt's compare fails and shows its token. So an `update` that throws anything
  /// but `outcomeUnknown` has not landed.
  func update(
    _ transform: @escaping @Sendable (inout Value) throws -> Void, initialValue: Value,
    continuation: UpdateContinuation<Value>
  ) {
    writes.enqueue { [self] in
      let deadline = ContinuousClock.now + Self.updateDeadline
      var uncertain: [String: Value] = [:]
      var current: (base: EtcdVersion, bytes: Data?)? = state.withLock { state in
        state.newest.map { ($0, state.stored) }
      }
      var attempt = 0
      var conflicts = 0
      while true {
        attempt += 1
        do throws(EtcdError) {
          if current == nil {
            let read = try await cluster.txn(
              compare: [], success: [EtcdTxn.range(key), EtcdTxn.range(receiptKey)], failure: [],
              readOnly: true)
            let keyValue = read.ranges.first?.first
            if let receipt = read.ranges.last?.first,
              let landed = uncertain[String(decoding: receipt.value, as: UTF8.self)]
            {
              observe(read.revision, keyValue)
              // The receipt was written in the same transaction as the value.
              return continuation.resume(
                returning: landed, version: EtcdVersion.stored(receipt.modRevision).shared)
            }
            publish(observe(read.revision, keyValue))
            current = (EtcdVersion(keyValue, at: read.revision), keyValue?.value)
          }
          var value = initialValue
          if let bytes = current?.bytes {
            switch self.value(from: bytes) {
            case .success(let stored): value = stored
            case .failure(let error): return continuation.resume(throwing: error)
            }
          }
          do {
            try transform(&value)
          } catch {
            return continuation.resume(throwing: error)
          }
          let bytes: Data
          do {
            bytes = try self.bytes(of: value)
          } catch {
            return continuation.resume(throwing: error)
          }
          let token = UUID().uuidString
          let lease = try await currentLease()
          state.withLock { $0.wroteReceipt = true }
          let result: EtcdTxnResult
          do throws(EtcdError) {
            let base = current?.base.modRevision ?? 0
            result = try await writing { () throws(EtcdError) in
              try await cluster.txn(
                compare: [EtcdTxn.modRevisionEquals(key, base)],
                success: [
                  EtcdTxn.put(key, bytes, lease: lease),
                  EtcdTxn.put(receiptKey, Data(token.utf8)),
                ],
                failure: [EtcdTxn.range(key), EtcdTxn.range(receiptKey)])
            }
          } catch {
            // A lost answer may still commit later (a leader without quorum keeps the entry in
            // its log): the token tells, when the key is read again. `unavailable` means no
            // member took the request (refused, or no leader), so nothing can land.
            if error.isTransient, !error.isUnavailable { uncertain[token] = value }
            throw error
          }
          if result.succeeded {
            observe(result.revision, ownKeyValue(bytes, revision: result.revision), own: true)
            // The reference takes the version as its own write: its next save writes over it.
            return continuation.resume(
              returning: value, version: EtcdVersion.stored(result.revision).shared)
          }
          endWrite()
          let keyValue = result.ranges.first?.first
          if let receipt = result.ranges.last?.first,
            let landed = uncertain[String(decoding: receipt.value, as: UTF8.self)]
          {
            observe(result.revision, keyValue)
            return continuation.resume(
              returning: landed, version: EtcdVersion.stored(receipt.modRevision).shared)
          }
          publish(observe(result.revision, keyValue))
          current = (EtcdVersion(keyValue, at: result.revision), keyValue?.value)
          // Refused by a newer version: no attempt of ours can land any more (the key moved
          // on past every compare we sent), so giving up here loses nothing.
          conflicts += 1
          let wait = Self.contentionBackoff.delay(afterFailures: conflicts) ?? .zero
          guard ContinuousClock.now + wait < deadline else {
            return continuation.resume(throwing: EtcdError.conflict(key: name))
          }
          if conflicts > 1 { try? await Task.sleep(for: wait) }
        } catch {
          guard error.isTransient, ContinuousClock.now < deadline else {
            // An attempt that may still land must not be reported as a plain failure: a caller
            // retrying on `unavailable` would apply the change twice.
            if error.isTransient, !uncertain.isEmpty {
              return continuation.resume(
                throwing: EtcdError.outcomeUnknown(
                  reason: "the update was sent while etcd was failing (\(error)) and may still be "
                    + "applied; read the value once etcd is reachable before trying again"))
            }
            return continuation.resume(throwing: error)
          }
          current = nil
          try? await Task.sleep(for: Self.updateBackoff.delay(afterFailures: attempt) ?? .zero)
        }
      }
    }
  }
}
