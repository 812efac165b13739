import Foundation

/// The three Firebase services a ``FirebaseConfigSource`` talks to.
///
/// ``production`` is Google's; ``all(at:)`` points every service at one server, such as a
/// test server or a proxy.
public struct FirebaseEndpoints: Sendable, Hashable {
  /// The Installations service (identity and auth tokens).
  public var installations: URL
  /// The Remote Config fetch service.
  public var remoteConfig: URL
  /// The Remote Config realtime service (the streamed change notifications).
  public var realtime: URL

  /// Creates endpoints from their root URLs.
  public init(installations: URL, remoteConfig: URL, realtime: URL) {
    self.installations = installations
    self.remoteConfig = remoteConfig
    self.realtime = realtime
  }

  /// Google's services: `firebaseinstallations.googleapis.com`,
  /// `firebaseremoteconfig.googleapis.com` and `firebaseremoteconfigrealtime.googleapis.com`.
  public static let production = FirebaseEndpoints(
    installations: URL(string: "https://firebaseinstallations.googleapis.com")!,
    remoteConfig: URL(string: "https://firebaseremoteconfig.googleapis.com")!,
    realtime: URL(string: "https://firebaseremoteconfigrealtime.googleapis.com")!)

  /// Every service at `url` (the same paths as Google's under it).
  public static func all(at url: URL) -> FirebaseEndpoints {
    FirebaseEndpoints(installations: url, remoteConfig: url, realtime: url)
  }

  /// `root` followed by `path` (whose segments are already escaped) and the query.
  static func url(_ root: URL, _ path: String, query: [(String, String)] = []) -> URL {
    var text = root.absoluteString
    while text.hasSuffix("/") { text.removeLast() }
    text += path
    if !query.isEmpty {
      text += "?" + query.map { "\($0.0)=\(escape($0.1))" }.joined(separator: "&")
    }
    return URL(string: text) ?? root
  }

  /// `text` percent-encoded for a path segment or a query value.
  static func escape(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
  }
}
