/// The versions a run of this process's own saves went through since the last version
/// written by someone else: a pure value, no I/O, tested on its own.
///
/// A save carries the version its value was derived from (`SaveContinuation.version`). When only
/// this process's own saves came after that version, the save may write over the newest of
/// them; when someone else's version came after it, the save must write over the version it
/// was derived from, so that its compare fails: it never saw the newer value. Keys whose saves
/// run asynchronously (the next save is made before the previous one is answered) keep one of
/// these. The reference itself decides with `VersionEngine`, which supersedes this: keys move
/// to it (resuming each save with the version it wrote) and this copy goes (issue #32).
package struct SaveLineage: Sendable, Equatable {
  /// Versions superseded by our own writes since the last external version, oldest first.
  private var superseded: [SharedVersion] = []
  /// The newest version of the run (an external one, or our latest write).
  package private(set) var latest: SharedVersion?

  /// How many superseded versions are remembered: the run's first, and the newest others. A
  /// save is derived from the first, or from a version at most as many own writes back as
  /// saves are in flight, far fewer than this.
  package static var limit: Int { 256 }

  package init() {}

  /// A version read or delivered from storage is now the newest: unless it is the run's own
  /// newest (a fresh read of our last write), it is someone else's, and the run starts again
  /// there.
  package mutating func external(_ version: SharedVersion?) {
    if let version, version == latest { return }
    superseded.removeAll(keepingCapacity: true)
    latest = version
  }

  /// Our own save, derived from `base` (as `base(derivedFrom:)` answered), wrote `written`.
  /// It continues the run when `base` was its newest version; otherwise (an unconditional
  /// write) a new run starts from it.
  package mutating func ownWrite(derivedFrom base: SharedVersion?, wrote written: SharedVersion) {
    if let latest, base == latest {
      superseded.append(latest)
      if superseded.count > Self.limit {
        // Forget the oldest but the first: the run's first version is the one holders keep
        // while only their own writes follow it (a key that does not resume with the version
        // it wrote never gives them another), however many writes they make.
        superseded.removeSubrange(1..<(1 + superseded.count - Self.limit))
      }
    } else {
      // Written over something the run does not lead to (an unconditional save): the stored
      // value is ours now, whatever the holders had seen before it.
      superseded = [latest, base].compactMap { $0 }
    }
    latest = written
  }

  /// The version a save derived from `version` must find stored: the run's newest when
  /// `version` is one of ours (or the newest itself), else `version` unchanged.
  package func base(derivedFrom version: SharedVersion?) -> SharedVersion? {
    guard let version, let latest else { return version }
    if version == latest || superseded.contains(version) { return latest }
    return version
  }
}
