import Synchronization

/// How many external changes a storage has started handing to one reference.
///
/// A reference counts the changes it applied from its subscription; a storage counts the
/// changes it began to deliver to that subscription (just before it moves its own idea of the
/// current version). A save whose value was made when the reference had applied fewer changes
/// than the storage has started delivering was made from a value that is no longer current:
/// the storage judges it against the version from before that change, so it never overwrites
/// the newer version.
final class ExternalChanges: Sendable {
  /// Changes the storage has started delivering to the subscription.
  let started = Atomic<UInt64>(0)

  /// Counts one change about to be delivered; returns its number (from 1).
  func begin() -> UInt64 { started.add(1, ordering: .sequentiallyConsistent).newValue }

  /// Whether a value made after `applied` changes predates one the storage has delivered.
  func isStale(_ applied: UInt64) -> Bool {
    started.load(ordering: .sequentiallyConsistent) > applied
  }
}

/// What a save's value was made from: the count of external changes its reference had applied.
struct SaveBasis: Sendable {
  let changes: ExternalChanges
  let applied: UInt64

  /// Whether the value predates a change the storage has started delivering.
  var isStale: Bool { changes.isStale(applied) }
}
