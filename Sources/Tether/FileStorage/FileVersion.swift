/// One state of a file as this process saw it: the file's identity and a fingerprint of its
/// bytes, or `absent`.
///
/// A save derived from a state finds the file unchanged when its identity is the same, or when
/// its bytes are the same under a new identity (a touch, or an identical write).
struct FileVersion: Equatable {
  /// `absent`, or the file's device, inode, size, modification time and mode.
  var identity: String
  /// The byte count and hash of the contents; `nil` for an absent file.
  var fingerprint: String?

  init(identity: String, fingerprint: String?) {
    self.identity = identity
    self.fingerprint = fingerprint
  }

  /// The state `disk` describes; `nil` when it is none a holder's value can be derived from
  /// (nothing known yet, or a file that does not decode).
  init?(_ disk: FileStorage.Disk) {
    switch disk {
    case .unknown, .corrupt: return nil
    case .absent: self.init(identity: Self.identity(of: nil), fingerprint: nil)
    case .present(let stat, let fingerprint):
      self.init(identity: Self.identity(of: stat), fingerprint: Self.text(of: fingerprint))
    }
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

/// The versions of one file as a file key hands them to holders (``SharedVersion``): the
/// states this process saw the file in, numbered in the order it saw them (a missing file is
/// ``SharedVersion/deleted(at:)`` its number). Numbers make the versions ordered, so the
/// reference's `VersionEngine` never takes an older state after a newer one: a change another
/// process made, delivered while this process's own save was in flight, is older than that
/// save's write, since the storage's queue delivers and writes one after the other.
///
/// One table per ``FileStorage``, so one per path per process: every reference of the file in
/// this process gets the same number for the same state. Only this process reads the numbers.
struct FileVersions {
  /// The newest number given.
  private(set) var newest: Int64 = 0
  /// The most recent states, oldest first, at most ``limit``: a save conditional on a number
  /// forgotten since is a conflict (the file changed that many times since its value was
  /// derived, or the number is not this storage's).
  private var recent: [(number: Int64, state: FileVersion)] = []

  /// How many states are remembered: far more than a holder's saves lag behind.
  static var limit: Int { 64 }

  /// The number of `state`, which the file is in now: the newest number when only the file's
  /// identity changed (the same bytes, or still absent), else the next one.
  mutating func number(_ state: FileVersion) -> SharedVersion {
    if let last = recent.last, last.state.fingerprint == state.fingerprint {
      recent[recent.count - 1].state = state
      return Self.version(last.number, of: state)
    }
    newest += 1
    recent.append((newest, state))
    if recent.count > Self.limit { recent.removeFirst() }
    return Self.version(newest, of: state)
  }

  /// The state numbered as `version`, if it is remembered.
  func state(of version: SharedVersion) -> FileVersion? {
    guard let number = version.ordinal, let entry = recent.last(where: { $0.number == number }),
      (entry.state.fingerprint == nil) == version.isAbsent
    else { return nil }
    return entry.state
  }

  private static func version(_ number: Int64, of state: FileVersion) -> SharedVersion {
    let version = SharedVersion(number)
    return state.fingerprint == nil ? .deleted(at: version) : version
  }
}
