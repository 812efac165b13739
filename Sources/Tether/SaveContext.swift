/// Why a key is being asked to save.
public enum SaveContext: Hashable, Sendable {
  /// The value changed through `withLock`; a key may throttle or coalesce these saves.
  case didSet
  /// A holder called `save()`; the key should write at once.
  case userInitiated
}
