import Observation
import Synchronization
import TetherSupport

/// The Observation bridge: a registrar made by the first read, notified after each change.
extension Reference {
  func announceValueChange() { notifyValueObservers() }
  func announceLoadError() { notifyObservation(ObservedProperties.loadError) }
  func announceLoading() { notifyObservation(ObservedProperties.isLoading) }

  /// Tells Observation trackers of `keyPath` that it changed. Without a registrar nothing
  /// ever read the reference, so no tracker can be watching it.
  @inlinable
  func notifyObservation(_ keyPath: KeyPath<ObservedProperties, Void> & Sendable) {
    guard let observers = self.observers.load(ordering: .acquiring) else { return }
    observers._withUnsafeGuaranteedRef {
      $0.registrar.withMutation(of: $0.subject, keyPath: keyPath) {}
    }
  }

  /// `notifyObservation` of the value, with the key path kept in `Observers`.
  @inlinable
  func notifyValueObservers() {
    guard let observers = self.observers.load(ordering: .acquiring) else { return }
    observers._withUnsafeGuaranteedRef {
      $0.registrar.withMutation(of: $0.subject, keyPath: $0.valuePath) {}
    }
  }

  /// Runs `body` with the registrar, making it on first use.
  ///
  /// Every read registers through here before it reads the value, and every change notifies
  /// after it changed the value (under the lock, or in `word`), so a tracker that read the
  /// old value made the registrar before the change looked for it.
  @inlinable @inline(__always)
  func observation(_ body: (Observers) -> Void) {
    let observers = self.observers.load(ordering: .acquiring) ?? makeObservers()
    observers._withUnsafeGuaranteedRef(body)
  }

  /// Makes the registrar once; a thread that loses the race uses the winner's.
  @usableFromInline @inline(never)
  func makeObservers() -> Unmanaged<Observers> {
    let made = Unmanaged.passRetained(Observers())
    let (exchanged, original) = observers.compareExchange(
      expected: nil, desired: made, ordering: .acquiringAndReleasing)
    if exchanged { return made }
    made.release()
    return original!
  }
}

/// A reference's Observation registrar, made when the reference is first read.
@usableFromInline
final class Observers: Sendable {
  /// `ObservedProperties.subject` and `.value`, kept here so reads skip the statics' accessors.
  /// Before `registrar`, whose size Observation decides at run time: their offsets are then
  /// constants in an inlined read, where fields after it are looked up.
  @usableFromInline let subject = ObservedProperties.subject
  @usableFromInline let valuePath = ObservedProperties.value
  @usableFromInline let registrar = ObservationRegistrar()

  init() {}
}
