/// A version of a stored value, as its key knows it: an etcd `mod_revision`, an HTTP `ETag`, a
/// file's identity.
///
/// A key that knows versions hands one over with each value it delivers
/// (``LoadContinuation/resume(returning:version:fileID:line:)``,
/// ``SharedSubscriber/yield(_:version:)``) and resumes each save with the version it wrote
/// (``SaveContinuation/resume(version:fileID:line:)``). The reference keeps it with the value,
/// and each save receives in ``SaveContinuation/version`` the version its value was *derived
/// from*. The key then writes only over that version, so a change made before someone else's
/// newer value arrived never silently overwrites it (see <doc:WritingACustomStrategy>).
///
/// "Nothing is stored" is a version too, and not the same as "no version known" (`nil`):
/// ``absent`` is what a save derived from nothing gets (a change made before the first load
/// answered), and means "write only if nothing is stored yet"; ``deleted(at:)`` is a deletion
/// the store numbered. Neither is ever equal to a version of a stored value.
///
/// ```swift
/// continuation.resume(returning: value, version: SharedVersion(etag))
/// // later, in save(_:context:continuation:):
/// if continuation.version?.isAbsent == true {
///   request.setValue("*", forHTTPHeaderField: "If-None-Match")
/// } else {
///   request.setValue(continuation.version?.rawValue, forHTTPHeaderField: "If-Match")
/// }
/// ```
///
/// Tether never interprets a version's spelling, with one exception: versions made from numbers
/// (made with `init(_:)` from an integer, such as revisions) are taken to grow with every write, so a
/// holder never takes a value numbered lower than one it already has.
public struct SharedVersion: Hashable, Sendable, CustomStringConvertible {
  /// The key's own spelling of the version; for a deletion, the deletion's version (empty for
  /// ``absent``).
  public var rawValue: String
  /// Whether nothing is stored at this version (``absent`` or ``deleted(at:)``).
  public private(set) var isAbsent = false

  /// A version spelled as the key likes (an ETag, a revision number, an inode and time).
  public init(_ rawValue: String) { self.rawValue = rawValue }

  /// A numbered version, such as a revision.
  public init(_ number: some BinaryInteger) { self.rawValue = String(number) }

  private init(absentAt rawValue: String) {
    self.rawValue = rawValue
    self.isAbsent = true
  }

  /// Nothing is stored, and no deletion's version is known: the store was never written, or
  /// the holder has seen nothing yet. A save derived from it writes only if nothing is stored.
  public static let absent = SharedVersion(absentAt: "")

  /// Nothing is stored since a deletion the store gave `version` (an etcd delete's revision).
  ///
  /// It is a version of its own: never equal to `version` itself, nor to ``absent``, nor to the
  /// deletion of another version. A save derived from it writes only if nothing is stored.
  public static func deleted(at version: SharedVersion) -> SharedVersion {
    SharedVersion(absentAt: version.rawValue)
  }

  /// For a deletion, the version the store gave it; `nil` otherwise (also for ``absent``).
  public var deletedAt: SharedVersion? {
    guard isAbsent, !rawValue.isEmpty else { return nil }
    return SharedVersion(rawValue)
  }

  /// The version as a number, if it was made from one; `nil` when nothing is stored (see
  /// ``deletedAt`` for a deletion's number).
  public var number: Int64? { isAbsent ? nil : Int64(rawValue) }

  /// Where the version falls among numbered versions: its number, or its deletion's.
  package var ordinal: Int64? { Int64(rawValue) }

  /// The raw value; "absent" or "deleted at …" when nothing is stored.
  public var description: String {
    guard isAbsent else { return rawValue }
    return rawValue.isEmpty ? "absent" : "deleted at \(rawValue)"
  }
}
