import Tether

/// A version of one etcd key as a `.etcd` key knows it: a stored value's `mod_revision`, or a
/// deletion, itself a version of its own.
///
/// etcd forgets a deleted key (its `mod_revision` reads 0 again), so two deletions look alike
/// to a compare. Holders must not: a save derived from the first deletion must not write over
/// a second one. A deletion is therefore known by the revision at which this process first
/// knew the key absent (the delete's own revision from a watch, or the revision of the read
/// that found it gone), and a save derived from an older version than the newest known one is
/// refused here, before etcd is asked.
enum EtcdVersion: Sendable, Hashable {
  /// A stored value, by its `mod_revision`.
  case stored(Int64)
  /// No value, known since `revision` (the delete's revision, or a read's).
  case absent(since: Int64)

  /// The store revision the version is known by: versions of one key only grow with it.
  var revision: Int64 {
    switch self {
    case .stored(let revision), .absent(since: let revision): revision
    }
  }

  /// What a compare-and-swap compares the key's `mod_revision` with: 0 for an absent key.
  var modRevision: Int64 {
    if case .stored(let revision) = self { revision } else { 0 }
  }

  var isAbsent: Bool {
    if case .absent = self { true } else { false }
  }

  /// The version of `keyValue` read or watched at `revision` (`nil`: the key is absent).
  init(_ keyValue: EtcdKeyValue?, at revision: Int64) {
    self = keyValue.map { .stored($0.modRevision) } ?? .absent(since: revision)
  }

  /// How holders see it: a stored value's `mod_revision`, a deletion as
  /// `SharedVersion.deleted(at:)` its revision.
  var shared: SharedVersion {
    switch self {
    case .stored(let revision): SharedVersion(revision)
    case .absent(since: let revision): .deleted(at: SharedVersion(revision))
    }
  }

  /// The version a holder was handed, or `nil` for one this key never handed out and for
  /// `SharedVersion.absent` (nothing seen: the save writes only if nothing is stored).
  init?(_ version: SharedVersion) {
    if let deletion = version.deletedAt?.number {
      self = .absent(since: deletion)
    } else if let number = version.number {
      // A plain 0 (how absence was once spelled) is an absence older than any other.
      self = number == 0 ? .absent(since: 0) : .stored(number)
    } else {
      return nil
    }
  }
}
