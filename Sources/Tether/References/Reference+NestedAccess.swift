import Synchronization
import TetherSupport

/// Touching a value from inside its own `withLock` body: reported, and answered with the value
/// as it was before the body started (taking the lock again would trap or deadlock).
extension Reference {
  /// Whether the calling thread is running a `withLock` body of this value. One relaxed load
  /// when no body runs.
  @inlinable var isInsideOwnBody: Bool {
    let owner = gate.load(ordering: .relaxed) & ~ReadGate.skipsLock
    return owner != 0 && owner == ThreadIdentity.current
  }

  /// The value as it was before the running body started. Called by the thread in `gate` only.
  @usableFromInline func valueBeforeBody() -> Value {
    if Self.isWordSized { return Self.unpack(word.load(ordering: .relaxed)) }
    return snapshot!
  }

  /// The value as a derived value reads it: inside this thread's own `withLock` body, the
  /// value as the body changed it so far, with no report (a member read while its parent
  /// changes, as swift-sharing answers it); else `value`.
  var valueForDerived: Value {
    guard isInsideOwnBody else { return value }
    observation { $0.registrar.access($0.subject, keyPath: $0.valuePath) }
    return valueAddress!.pointee
  }

  /// `nestedRead()`, specialized for `Value` in the caller and never inlined: every way out
  /// of the inlined `value` then returns in registers, where a generic call's result goes
  /// through memory on every read.
  @inlinable @inline(never)
  func specializedNestedRead() -> Value { nestedRead() }

  /// A read from inside the value's own `withLock`: reported, and answered with the value as
  /// it was before the body started (taking the lock again would trap or deadlock).
  @usableFromInline func nestedRead() -> Value {
    reportIssue(
      "\(name) was read inside its own withLock; the read returns the value as it was before "
        + "the body started. Read and change the value through the body's inout argument "
        + "instead.", observer: issueObserver, fileID: bodyFileID, line: bodyLine)
    return valueBeforeBody()
  }

  /// A `withLock` from inside the value's own `withLock`: reported; `body` runs on a copy of
  /// the value as it was before the outer body started, and its changes are discarded.
  @usableFromInline
  func nestedWithLock<R, E: Error>(
    _ body: (inout Value) throws(E) -> R, fileID: StaticString?, line: UInt?
  ) throws(E) -> R {
    reportIssue(
      "withLock on \(name) was called inside its own withLock; the inner body ran on a copy "
        + "of the value as it was before the outer body started, and its changes are "
        + "discarded. Change the value through the outer body's inout argument instead.",
      observer: issueObserver, fileID: fileID, line: line)
    var copy = valueBeforeBody()
    return try body(&copy)
  }

  func reportNestedAccess<T>(_ property: String, returning empty: T) -> T {
    reportIssue(
      "\(property) of \(name) was read inside its own withLock and answers \(empty as Any); "
        + "read it after the body returns.", observer: issueObserver, fileID: bodyFileID,
      line: bodyLine)
    return empty
  }

  /// The value's name in reports: its key, or what made it.
  var name: String {
    guard let reader else { return "a shared value without a key (Shared(value:))" }
    return String(describing: reader)
  }
}
