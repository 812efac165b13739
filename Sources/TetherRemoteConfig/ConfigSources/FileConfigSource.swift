import Foundation
import Streams
import Tether

/// A config source that reads a JSON object of entries from a local file and watches it.
///
/// Use it for a mounted Kubernetes config map, for development, or for a config file shipped
/// with the app:
///
/// ```swift
/// let config = RemoteConfig(source: FileConfigSource(url: configFileURL))
/// try await config.fetchAndActivate()
/// // Editing the file now updates `config` without polling.
/// ```
///
/// An unchanged file (same size, modification time and inode) is not read again.
public final class FileConfigSource: RemoteConfigSource {
  /// The file's URL.
  public let url: URL
  /// Whether the file is watched for changes.
  public let watchesChanges: Bool

  /// Creates a source for the file at `url`, watched for changes unless `watch` is `false`.
  public init(url: URL, watch: Bool = true) {
    self.url = url
    self.watchesChanges = watch
  }

  /// Reads the file, or answers `.notModified` when it is unchanged since
  /// `request.previousVersion`.
  public func fetch(_ request: ConfigFetchRequest) async throws -> ConfigFetchResult {
    let tag: String
    do {
      let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
      let size = (attributes[.size] as? NSNumber)?.int64Value ?? -1
      let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
      let inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
      tag = "\(size)-\(modified)-\(inode)"
    } catch {
      throw RemoteConfigError.fileUnreadable(path: url.path, reason: "\(error)")
    }
    if tag == request.previousVersion?.etag { return .notModified }
    let data: Data
    do {
      data = try Data(contentsOf: url)
    } catch {
      throw RemoteConfigError.fileUnreadable(path: url.path, reason: "\(error)")
    }
    let entries = try ConfigDocument.entries(from: data)
    return .modified(ConfigPayload(entries: entries, version: ConfigVersion(etag: tag)))
  }

  /// Watches the file with Tether's file watcher (through its directory, so an atomic replace
  /// is seen as well as an in-place edit), and the `..data` entry beside it, which a Kubernetes
  /// config map update swaps. `onChange` runs on the watcher's thread after each change.
  public func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> AnyCancellable? {
    guard watchesChanges else { return nil }
    let file = url.standardizedFileURL
    let configMapData = file.deletingLastPathComponent()
      .appendingPathComponent("..data", isDirectory: false)
    let watches = [file.path, configMapData.path].map { path in
      FileWatcher.shared.watch(path) { change in
        // A refused watch is followed by periodic `unknown` checks, which report changes.
        if case .unwatchable = change { return }
        onChange()
      }
    }
    return AnyCancellable { watches.forEach { $0.cancel() } }
  }
}
