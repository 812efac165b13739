/// The version of a file as a file key hands it to holders (a ``SharedVersion``): the file's
/// identity and a fingerprint of its bytes, or `absent`.
///
/// Only this process compares these (a fingerprint's hash is seeded per process), so the text
/// needs no stable format beyond "identity#fingerprint". A save derived from a version finds
/// the file unchanged when its identity is the same, or when its bytes are the same under a
/// new identity (a touch, or an identical write).
struct FileVersion: Equatable {
  /// `absent`, or the file's device, inode, size, modification time and mode.
  let identity: String
  /// The byte count and hash of the contents; `nil` for an absent file.
  let fingerprint: String?

  /// The parts of a version a file key handed over.
  init(_ version: SharedVersion) {
    let parts = version.rawValue.split(separator: "#", maxSplits: 1)
    identity = parts.first.map(String.init) ?? ""
    fingerprint = parts.count > 1 ? String(parts[1]) : nil
  }

  init(identity: String, fingerprint: String?) {
    self.identity = identity
    self.fingerprint = fingerprint
  }

  /// The version as holders get it.
  var version: SharedVersion {
    SharedVersion(fingerprint.map { "\(identity)#\($0)" } ?? identity)
  }

  /// Whether the file at the path now (`nil`: none) is this version by identity.
  func matches(_ current: FileStat?) -> Bool { identity == Self.identity(of: current) }

  static func identity(of stat: FileStat?) -> String {
    guard let stat else { return "absent" }
    return "\(stat.device):\(stat.inode):\(stat.size):\(stat.modifiedSeconds)."
      + "\(stat.modifiedNanoseconds):\(stat.mode)"
  }

  static func text(of fingerprint: Fingerprint) -> String {
    "\(fingerprint.count):\(fingerprint.hash)"
  }
}

extension FileStorage.Disk {
  /// The version holders are given with this state of the file; `nil` when it is not one a
  /// holder's value can be derived from (nothing known yet, or a file that does not decode).
  var version: SharedVersion? {
    switch self {
    case .unknown, .corrupt: nil
    case .absent: FileVersion(identity: FileVersion.identity(of: nil), fingerprint: nil).version
    case .present(let stat, let fingerprint):
      FileVersion(
        identity: FileVersion.identity(of: stat), fingerprint: FileVersion.text(of: fingerprint)
      ).version
    }
  }
}
