import Synchronization
import TetherSupport

/// A protocol indicating that an activity or action supports cancellation.
///
/// `cancel()` may be called from any thread, any number of times.
public protocol Cancellable: Sendable {
  /// Cancels the activity. Calling it again has no effect.
  func cancel()
}

/// A type-erasing cancellable object that cancels the wrapped activity when it is deinitialised.
///
/// Keep the `AnyCancellable` returned by `sink` for as long as you want values:
///
/// ```swift
/// var cancellables = Set<AnyCancellable>()
/// subject.sink { print($0) }.store(in: &cancellables)
/// ```
public final class AnyCancellable: Cancellable, Hashable {
  /// What `cancel()` runs, once. A wrapped `Cancellable` is kept as such rather than in a
  /// closure: that saves an allocation per subscription (`sink` wraps its subscriber).
  private let cancelAction: Lock<CancelAction?>

  /// Creates a cancellable that runs `cancel` once, on `cancel()` or on deinit.
  public init(_ cancel: @escaping @Sendable () -> Void) {
    cancelAction = Lock(unchecked: .closure(cancel))
  }

  /// Creates a cancellable that cancels `canceller` on `cancel()` or on deinit.
  public init<C: Cancellable>(_ canceller: C) {
    cancelAction = Lock(unchecked: .cancellable(canceller))
  }

  deinit { cancel() }

  /// Runs the cancel action if it has not run yet.
  public func cancel() {
    let action = cancelAction.withLockUnchecked { action in
      defer { action = nil }
      return action
    }
    switch action {
    case .closure(let cancel): cancel()
    case .cancellable(let canceller): canceller.cancel()
    case nil: break
    }
  }

  /// Stores this cancellable in the given set, which keeps it alive.
  public func store(in set: inout Set<AnyCancellable>) {
    set.insert(self)
  }

  /// Appends this cancellable to the given collection, which keeps it alive.
  public func store<C: RangeReplaceableCollection>(in collection: inout C)
  where C.Element == AnyCancellable {
    collection.append(self)
  }

  /// Two `AnyCancellable` values are equal when they are the same object.
  public static func == (lhs: AnyCancellable, rhs: AnyCancellable) -> Bool { lhs === rhs }

  /// Hashes the object's identity.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(ObjectIdentifier(self))
  }
}

/// The two things an ``AnyCancellable`` can run.
private enum CancelAction: Sendable {
  case closure(@Sendable () -> Void)
  case cancellable(any Cancellable)
}

extension Cancellable {
  /// Stores a type-erased copy of this cancellable in the given set.
  public func store(in set: inout Set<AnyCancellable>) {
    AnyCancellable(self).store(in: &set)
  }

  /// Appends a type-erased copy of this cancellable to the given collection.
  public func store<C: RangeReplaceableCollection>(in collection: inout C)
  where C.Element == AnyCancellable {
    AnyCancellable(self).store(in: &collection)
  }
}
