/// A version of a stored value, as its key knows it: an etcd `mod_revision`, an HTTP `ETag`, a
/// file's identity.
///
/// Tether never interprets a version. A key that knows versions hands one over with each value
/// it delivers (``LoadContinuation/resume(returning:version:fileID:line:)``,
/// ``SharedSubscriber/yield(_:version:)``); the reference keeps it with the value, and each
/// save receives in ``SaveContinuation/version`` the version its value was *derived from*. The key
/// then writes only over that version, so a change made before someone else's newer value
/// arrived never silently overwrites it (see <doc:WritingACustomStrategy>).
///
/// ```swift
/// continuation.resume(returning: value, version: SharedVersion(etag))
/// // later, in save(_:context:continuation:):
/// request.setValue(continuation.version?.rawValue, forHTTPHeaderField: "If-Match")
/// ```
public struct SharedVersion: Hashable, Sendable, CustomStringConvertible {
  /// The key's own spelling of the version.
  public var rawValue: String

  /// A version spelled as the key likes (an ETag, a revision number, an inode and time).
  public init(_ rawValue: String) { self.rawValue = rawValue }

  /// A numbered version, such as a revision.
  public init(_ number: some BinaryInteger) { self.rawValue = String(number) }

  /// The version as a number, if it was made from one.
  public var number: Int64? { Int64(rawValue) }

  /// The raw value.
  public var description: String { rawValue }
}
