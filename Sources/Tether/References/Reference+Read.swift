import Observation
import Synchronization
import TetherSupport

/// The value cell's read path: the lock-free read of a word-sized value, the locked read of
/// any other, and the status a holder reads (`isLoading`, `loadError`, `saveError`).
extension Reference {
  /// The current value, without registering an Observation access.
  @usableFromInline var observedValue: Value {
    if isInsideOwnBody { return nestedRead() }
    return state.withLock { $0.value }
  }

  /// Always inlined, and small: the word-sized read is an Observation access and two atomic
  /// loads in the caller (`gate`, then `word`). The lazy registrar's extra load and branch made it too large for the
  /// inliner (the call cost `core.read` a third more), so the locked read is out of line.
  @inlinable var value: Value {
    @inline(__always) get {
      observation { $0.registrar.access($0.subject, keyPath: $0.valuePath) }
      // One load answers both questions: reads skip the lock, and no body runs (a body of this
      // thread's own would be a nested read, which the slow path reports). The acquiring load
      // orders this read after the first one's critical section, so any change it can miss
      // has not happened yet and will notify Observation.
      if Self.isWordSized, gate.load(ordering: .acquiring) == ReadGate.skipsLock {
        return Self.unpack(word.load(ordering: .acquiring))
      }
      return lockedValue()
    }
  }

  /// `value` after its Observation access, through the lock (or a nested read's report); the
  /// first read marks the value observable. Inlinable so it is specialized for `Value` in the caller, never inlined.
  @inlinable @inline(never)
  func lockedValue() -> Value {
    if isInsideOwnBody { return specializedNestedRead() }
    return state.withLock { state in
      if !state.observable {
        state.observable = true
        // Under the lock no body runs, so `gate` holds no thread.
        if Self.isWordSized { gate.store(ReadGate.skipsLock, ordering: .releasing) }
      }
      return state.value
    }
  }

  /// Whether `Value` is plain data that fits in `word`.
  @inlinable static var isWordSized: Bool {
    _isPOD(Value.self) && MemoryLayout<Value>.size <= 8 && MemoryLayout<Value>.alignment <= 8
  }

  /// The bytes of a word-sized value.
  @inlinable static func pack(_ value: Value) -> UInt64 {
    var bits: UInt64 = 0
    withUnsafeMutableBytes(of: &bits) { $0.storeBytes(of: value, as: Value.self) }
    return bits
  }

  /// A word-sized value from its bytes.
  @inlinable static func unpack(_ bits: UInt64) -> Value {
    withUnsafeBytes(of: bits) { $0.load(as: Value.self) }
  }

  /// Rewrites `word` after `state.value` changed. Called with `state`'s lock held.
  @inlinable func storeWord(_ value: Value) {
    if Self.isWordSized { word.store(Self.pack(value), ordering: .releasing) }
  }

  var isLoading: Bool {
    observation { $0.registrar.access($0.subject, keyPath: ObservedProperties.isLoading) }
    if isInsideOwnBody { return reportNestedAccess("isLoading", returning: false) }
    return state.withLock { $0.isLoading }
  }

  var loadError: (any Error)? {
    observation { $0.registrar.access($0.subject, keyPath: ObservedProperties.loadError) }
    if isInsideOwnBody { return reportNestedAccess("loadError", returning: nil) }
    return state.withLock { $0.loadError }
  }

  var saveError: (any Error)? {
    observation { $0.registrar.access($0.subject, keyPath: ObservedProperties.saveError) }
    if isInsideOwnBody { return reportNestedAccess("saveError", returning: nil) }
    return state.withLock { $0.saveError }
  }
}
