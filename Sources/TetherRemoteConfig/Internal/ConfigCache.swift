import Foundation
import Tether

/// The last activated config as stored on disk.
struct CachedConfig: Sendable, Equatable {
  var entries: [String: JSONValue]
  var version: ConfigVersion
  var fetchTime: Date?

  static let format = 1

  /// The cache document: `{"format", "etag", "lastModified", "updatedAt", "versionNumber",
  /// "fetchTime", "entries"}`. Written with the module's own JSON writer so that a start
  /// from 1,000 cached keys costs one parse.
  func encoded() -> Data {
    var object: [String: JSONValue] = [
      "format": .int(Self.format),
      "entries": .object(entries),
    ]
    if let etag = version.etag { object["etag"] = .string(etag) }
    if let lastModified = version.lastModified { object["lastModified"] = .string(lastModified) }
    if let updatedAt = version.updatedAt {
      object["updatedAt"] = .double(updatedAt.timeIntervalSince1970)
    }
    if let number = version.number { object["versionNumber"] = .int(number) }
    if let fetchTime { object["fetchTime"] = .double(fetchTime.timeIntervalSince1970) }
    return JSONValue.object(object).jsonData()
  }

  struct Unreadable: Error, CustomStringConvertible {
    let description: String
  }

  init(entries: [String: JSONValue], version: ConfigVersion, fetchTime: Date?) {
    self.entries = entries
    self.version = version
    self.fetchTime = fetchTime
  }

  init(decoding data: Data) throws(Unreadable) {
    let document: JSONValue
    do {
      document = try JSONValue(parsing: data)
    } catch {
      throw Unreadable(description: "not JSON: \(error)")
    }
    guard case .object(let object) = document, object["format"] == .int(Self.format),
      case .object(let entries)? = object["entries"]
    else {
      throw Unreadable(description: "not a Tether config cache (format \(Self.format))")
    }
    func seconds(_ name: String) -> Date? {
      switch object[name] {
      case .double(let value)?: Date(timeIntervalSince1970: value)
      case .int(let value)?: Date(timeIntervalSince1970: Double(value))
      default: nil
      }
    }
    func text(_ name: String) -> String? {
      if case .string(let value)? = object[name] { return value }
      return nil
    }
    var number: Int?
    if case .int(let value)? = object["versionNumber"] { number = value }
    self.entries = entries
    self.version = ConfigVersion(
      etag: text("etag"), lastModified: text("lastModified"), updatedAt: seconds("updatedAt"),
      number: number)
    self.fetchTime = seconds("fetchTime")
  }
}

/// Reads and writes the cache file.
enum ConfigCacheFile {
  /// The cached config, `nil` if there is none, or the corruption error after moving the
  /// unreadable file aside (as `NAME.corrupt-TIMESTAMP`).
  static func read(_ url: URL) -> Result<CachedConfig?, RemoteConfigError> {
    let data: Data
    do {
      data = try Data(contentsOf: url)
    } catch {
      if !FileManager.default.fileExists(atPath: url.path) { return .success(nil) }
      return .failure(.corruptCache(movedTo: nil, reason: "cannot read: \(error)"))
    }
    do {
      return .success(try CachedConfig(decoding: data))
    } catch {
      let stamp = Int(Date().timeIntervalSince1970 * 1000)
      let aside = url.deletingLastPathComponent()
        .appendingPathComponent("\(url.lastPathComponent).corrupt-\(stamp)")
      let moved = (try? FileManager.default.moveItem(at: url, to: aside)) != nil
      return .failure(.corruptCache(movedTo: moved ? aside.path : nil, reason: error.description))
    }
  }

  /// Writes atomically: a temporary file in the same directory, then a rename, so a reader
  /// never sees half a cache. There is no fsync: the cache only speeds up a start, and a file
  /// a power loss leaves empty is handled like any corrupt cache (moved aside, reported).
  static func write(_ cache: CachedConfig, to url: URL) throws {
    let data = cache.encoded()
    do throws(FileSystemError) {
      try FileSystem.writeAtomically(data, to: url.path, sync: false)
    } catch {
      throw CocoaError(
        .fileWriteUnknown,
        userInfo: [
          NSFilePathErrorKey: url.path,
          NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: error.code) ?? .EIO),
        ])
    }
  }
}
