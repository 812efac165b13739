import Synchronization
import TetherSupport

/// `withLock`: the one way a value changes in place, and the bookkeeping of a change.
extension Reference {
  @inlinable @inline(__always)
  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    try withLock(body, save: savesToKey)
  }

  /// `withLock`, asking the key to save the change only if `save` (the fallback of `update`
  /// saves explicitly instead).
  ///
  /// A body that throws leaves the value as it was: nothing is published or saved. The value
  /// before the body is kept anyway (in `word` for word-sized values, else in `snapshot`) for
  /// comparison and for nested reads, so a body that cannot throw pays nothing for this.
  ///
  /// Always inlined, so the caller's body closure is inlined with it: no indirect call and no
  /// closure context on the stack (this halves `core.withlock`; the slow paths stay out of
  /// line).
  @inlinable @inline(__always)
  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R, save: Bool) throws(E) -> R {
    let thread = ThreadIdentity.current
    if gate.load(ordering: .relaxed) & ~ReadGate.skipsLock == thread {
      return try nestedWithLock(body)
    }
    var result: R?
    let (observable, drain) = try state.withLock { state throws(E) -> (Bool, DrainStart?) in
      if !Self.isWordSized { snapshot = state.value }
      // Under the lock no other body runs: `gate` holds only the read flag. The store that
      // ends the body releases, so a read that finds the flag again is ordered after the
      // critical section that first set it.
      let skipsLock = gate.load(ordering: .relaxed)
      gate.store(thread | skipsLock, ordering: .relaxed)
      do throws(E) {
        result = try body(&state.value)
      } catch {
        gate.store(skipsLock, ordering: .releasing)
        state.value = valueBeforeBodyEnds()
        throw error
      }
      gate.store(skipsLock, ordering: .releasing)
      let old = valueBeforeBodyEnds()
      storeWord(state.value)
      if isEquatable, isSame(old, state.value) { return (false, nil) }
      return (state.observable, recordChange(&state, save: save))
    }
    if observable { notifyValueObservers() }
    if let drain { self.drain(drain) }
    return result!
  }

  /// Takes the value as it was before the body, after the body returned. Called with `state`'s
  /// lock held, before `word` is rewritten.
  @inlinable func valueBeforeBodyEnds() -> Value {
    if Self.isWordSized { return Self.unpack(word.load(ordering: .relaxed)) }
    defer { snapshot = nil }
    return snapshot!
  }

  /// Records an applied change under the lock and queues its deliveries. Returns what to
  /// deliver if the caller becomes the drainer.
  ///
  /// The common case (nothing to save, nobody listening) is a counter bump, inlined into
  /// `withLock`; queueing is out of line.
  @inlinable @inline(__always)
  func recordChange(_ state: inout State, save: Bool) -> DrainStart? {
    state.version &+= 1
    guard save || !state.listeners.isEmpty else { return nil }
    return queueChange(&state, save: save)
  }

  /// `recordChange`'s queueing part: numbers the save and enqueues the delivery.
  @usableFromInline
  func queueChange(_ state: inout State, save: Bool) -> DrainStart? {
    var sequence: UInt64?
    if save {
      state.saveSequence &+= 1
      sequence = state.saveSequence
    }
    return enqueue(
      .change(
        version: state.version, value: state.value, save: sequence, basis: state.basis),
      in: &state)
  }
}
