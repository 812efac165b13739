/// A key that may hold a `.didSet` save back for a throttle window before writing it (and only
/// then resumes its continuation).
///
/// Tether keeps one save of a reference in flight, so a `save()` (`.userInitiated`) made while
/// a throttled save is held waits for it. It must not wait for the window: the reference then
/// calls ``flushThrottledSave()``, and the key writes the held save now. Coalescing is
/// unchanged: changes made meanwhile still wait as one next save.
package protocol ThrottledSaveKey {
  /// Writes a save held back by the throttle now, resuming its continuation when written.
  /// Does nothing when no save is held.
  func flushThrottledSave()
}

extension FileStorageKey: ThrottledSaveKey {
  package func flushThrottledSave() {
    if case .disk(let storage) = backend { storage.flush() }
  }
}

extension SharedKeyDefault: ThrottledSaveKey where Base: ThrottledSaveKey {
  package func flushThrottledSave() { base.flushThrottledSave() }
}
