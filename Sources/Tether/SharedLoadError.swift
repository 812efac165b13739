/// The error `init(require:)` throws when the key has no stored value.
public enum SharedLoadError: Error, Equatable, Sendable {
  /// The key loaded nothing: there is no stored value.
  case notFound
}
