import Observation

/// The Observation subject and key paths every reference reports to its own registrar.
///
/// Trackers are keyed by registrar and key path; the subject is only passed through. Using one
/// non-generic subject keeps the key paths static: a key path into a generic class is built at
/// run time, which would cost every new reference about a microsecond.
@usableFromInline
final class ObservedProperties: Observable, Sendable {
  @usableFromInline static let subject = ObservedProperties()
  @usableFromInline static let value: KeyPath<ObservedProperties, Void> & Sendable = \.value
  @usableFromInline static let isLoading: KeyPath<ObservedProperties, Void> & Sendable =
    \.isLoading
  @usableFromInline static let loadError: KeyPath<ObservedProperties, Void> & Sendable =
    \.loadError
  @usableFromInline static let saveError: KeyPath<ObservedProperties, Void> & Sendable =
    \.saveError

  @usableFromInline var value: Void { () }
  @usableFromInline var isLoading: Void { () }
  @usableFromInline var loadError: Void { () }
  @usableFromInline var saveError: Void { () }
}
