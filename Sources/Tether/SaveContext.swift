/// Why a key is being asked to save, and what the saved value was derived from.
///
/// Match the reason with `switch context.reason`, `if case .didSet = context`, or
/// `context == .userInitiated`, as with swift-sharing's enum: equality and hashing compare the
/// reason only, so a context that carries a version still equals `.userInitiated`. Compare
/// ``version`` yourself where it matters. A key whose
/// storage has versions writes conditionally on ``version``: the version current when the
/// mutating body ran, captured under the value's lock, so a change of someone else's that
/// arrived while the body ran (or while an earlier save was in flight) is never overwritten.
///
/// ```swift
/// func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
///   // write only if the stored version is still `context.version`, else report a conflict
/// }
/// ```
public struct SaveContext: Hashable, Sendable {
  /// Why a save happens.
  public enum Reason: Hashable, Sendable {
    /// The value changed through `withLock`; a key may throttle or coalesce these saves.
    case didSet
    /// A holder called `save()`; the key should write at once.
    case userInitiated
  }

  /// Why the key is asked to save.
  public var reason: Reason
  /// The version of the stored value this value was derived from, as the key handed it over
  /// with a load or a subscription's yield; `nil` when the key never gave one (keys without
  /// versions, or nothing loaded yet).
  public var version: SharedVersion?

  /// A context for `reason`, derived from `version`.
  public init(_ reason: Reason, version: SharedVersion? = nil) {
    self.reason = reason
    self.version = version
  }

  /// The value changed through `withLock`; a key may throttle or coalesce these saves.
  public static var didSet: SaveContext { SaveContext(.didSet) }
  /// A holder called `save()`; the key should write at once.
  public static var userInitiated: SaveContext { SaveContext(.userInitiated) }

  /// Whether the two contexts have the same reason, whatever their versions (see the type's
  /// documentation).
  public static func == (lhs: SaveContext, rhs: SaveContext) -> Bool { lhs.reason == rhs.reason }

  /// Hashes the reason only, as ``==(_:_:)`` compares it.
  public func hash(into hasher: inout Hasher) { hasher.combine(reason) }

  /// Matches by reason, whatever the version: `if case .didSet = context { … }`.
  public static func ~= (pattern: SaveContext, value: SaveContext) -> Bool {
    pattern.reason == value.reason
  }
}
