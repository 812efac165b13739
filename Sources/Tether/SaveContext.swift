/// Why a key is being asked to save: swift-sharing's enum, case for case.
///
/// Switch over it exhaustively, as a key written for swift-sharing does:
///
/// ```swift
/// func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
///   switch context {
///   case .didSet: break  // may throttle or coalesce
///   case .userInitiated: break  // write at once
///   }
///   // A versioned store writes only if it is still at `continuation.version`.
/// }
/// ```
///
/// The version the saved value was derived from is not part of the context: it arrives as
/// ``SaveContinuation/version`` (see <doc:WritingACustomStrategy>).
public enum SaveContext: Hashable, Sendable {
  /// The value changed through `withLock`; a key may throttle or coalesce these saves.
  case didSet
  /// A holder called `save()`; the key should write at once.
  case userInitiated
}

// Tether's earlier spellings, from when the context was a struct carrying the version.
extension SaveContext {
  /// The earlier name of the reason: `SaveContext` is the reason itself now.
  public typealias Reason = SaveContext

  /// The context itself: kept so that `context.reason` (an earlier spelling) still compiles;
  /// switch over `context` directly.
  public var reason: SaveContext { self }

  /// A context for `reason`; the same as `reason` itself.
  public init(_ reason: SaveContext) { self = reason }

  /// No longer carried here: read ``SaveContinuation/version``.
  ///
  /// It is unavailable rather than `nil`, since a key reading `nil` would write
  /// unconditionally and overwrite changes it never saw.
  @available(
    *, unavailable,
    message: "the version now arrives as continuation.version (SaveContinuation.version)"
  )
  public var version: SharedVersion? { nil }

  /// No longer possible: the version travels in the continuation
  /// (``SaveContinuation/init(_:version:callback:)``).
  @available(
    *, unavailable,
    message: "pass the version to SaveContinuation(_:version:callback:) instead"
  )
  public init(_ reason: SaveContext, version: SharedVersion?) { self = reason }
}
