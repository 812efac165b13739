import TetherSupport

/// What a `@Published` property keeps: its value, the subject behind `$property`, the owner's
/// `objectWillChange` once someone asked for it, and the subscriptions `assign(to:)` made.
///
/// The value and the publisher live in one lock; setting sends `objectWillChange`, then the
/// new value to `$property`'s subscribers, then stores it (Combine's `willSet` order). Nothing
/// is called under the lock.
final class PublishedStorage<Value> {
  private struct State {
    var value: Value
    var objectWillChange: ObservableObjectPublisher?
    var assignments: [AnyCancellable] = []
  }

  private let state: Lock<State>
  /// The subject behind `$property`; it holds the newest value for new subscribers.
  let subject: CurrentValueSubject<Value, Never>

  init(_ value: Value) {
    state = Lock(unchecked: State(value: value))
    subject = CurrentValueSubject(value)
  }

  /// The property's value.
  var value: Value {
    state.withLockUnchecked { $0.value }
  }

  /// Sets the value: `objectWillChange` first, then `$property`'s subscribers, then the value.
  func set(_ newValue: Value) {
    let publisher = state.withLockUnchecked { $0.objectWillChange }
    publisher?.send()
    subject.send(newValue)
    state.withLockUnchecked { $0.value = newValue }
  }

  /// Installs the owner's `objectWillChange` unless one is installed; returns the installed one.
  func installObjectWillChange(_ publisher: ObservableObjectPublisher) -> ObservableObjectPublisher
  {
    state.withLockUnchecked { state in
      if let installed = state.objectWillChange { return installed }
      state.objectWillChange = publisher
      return publisher
    }
  }

  /// Keeps a subscription made by `assign(to:)` for as long as the property exists.
  func keep(_ assignment: AnyCancellable) {
    state.withLockUnchecked { $0.assignments.append(assignment) }
  }
}

// @unchecked: every mutable field lives in `state`, a `Lock`; `subject` is itself thread-safe.
// Values cross threads only when the owner lets them (`Published` is `Sendable` only when
// `Value` is), as with the subjects.
extension PublishedStorage: @unchecked Sendable {}
