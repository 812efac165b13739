/// A type of object with a publisher that emits before the object changes: Combine's
/// `ObservableObject`, for view models that port with their `@Published` properties.
///
/// A class whose `objectWillChange` is the default ``ObservableObjectPublisher`` gets it
/// synthesized: every ``Published`` property of the instance (its superclasses' included) sends
/// on it before each change, so one subscription sees every change:
///
/// ```swift
/// final class Profile: ObservableObject {
///   @Published var name = ""
///   @Published var isSaving = false
/// }
///
/// let profile = Profile()
/// let cancellable = profile.objectWillChange.sink { print("about to change") }
/// profile.name = "Ada"  // prints "about to change", then the name changes
/// ```
///
/// The synthesized publisher is found by reflection (`Mirror`) over the instance's `@Published`
/// storage the first time `objectWillChange` is read, and kept in that storage, so every read
/// returns the same publisher. A class without `@Published` properties has nowhere to keep it:
/// each read returns a new publisher, so declare `let objectWillChange =
/// ObservableObjectPublisher()` and send on it yourself.
///
/// Observation's `@Observable` is the other way to watch a model, and the one Tether's
/// `@Shared` is designed for (`withObservationTracking`, `Observations`): it tracks which
/// properties a reader used and needs no publisher. Use `ObservableObject` for code that was
/// written for Combine; a model may also keep a `@Shared` value and expose it as a
/// `@Published` property by assigning `$shared.publisher` to it.
public protocol ObservableObject: AnyObject {
  /// The type of publisher that emits before the object changes.
  associatedtype ObjectWillChangePublisher: Publisher = ObservableObjectPublisher
  where ObjectWillChangePublisher.Failure == Never

  /// A publisher that emits before the object changes.
  var objectWillChange: ObjectWillChangePublisher { get }
}

extension ObservableObject where ObjectWillChangePublisher == ObservableObjectPublisher {
  /// A publisher that emits before any of the object's `@Published` properties changes.
  ///
  /// Safe to read from any thread; every read returns the same publisher when the class has at
  /// least one `@Published` property.
  public var objectWillChange: ObservableObjectPublisher {
    var fields: [any PublishedField] = []
    var mirror: Mirror? = Mirror(reflecting: self)
    while let current = mirror {
      for child in current.children {
        if let field = child.value as? any PublishedField { fields.append(field) }
      }
      mirror = current.superclassMirror
    }
    guard let first = fields.first else { return ObservableObjectPublisher() }
    // The first field keeps the publisher; the first reader to install one wins a race, and
    // every reader installs that same one in the other fields (installing is idempotent).
    let publisher = first.installObjectWillChange(ObservableObjectPublisher())
    for field in fields.dropFirst() {
      _ = field.installObjectWillChange(publisher)
    }
    return publisher
  }
}

/// The `@Published` storage the synthesized `objectWillChange` looks for.
protocol PublishedField {
  /// Makes the property send on `publisher` before each change, unless it already sends on
  /// one; returns the publisher it sends on.
  func installObjectWillChange(_ publisher: ObservableObjectPublisher) -> ObservableObjectPublisher
}
