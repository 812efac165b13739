import Foundation
import Streams
import Tether
import TetherRemoteConfig

// The keys the tour reads. Declaring them on `ConfigKeys` lets lookups say `config[.maxItems]`.
extension ConfigKeys {
  static let welcomeTitle = ConfigKey<String>("welcome_title", default: "Welcome")
  static let maxItems = ConfigKey<Int>("max_items", default: 10)
  static let newCheckout = ConfigKey<Bool>("new_checkout", default: false)
  static let accentColor = ConfigKey<HexColor>(
    "accent_color", default: HexColor(red: 0, green: 122, blue: 255))
  static let launchDate = ConfigKey<Date?>("launch_date")
  static let theme = ConfigKey<TourTheme>("theme", default: .light)
  static let tags = ConfigKey<[String]>("tags")
  static let banner = ConfigKey<TourBanner?>("banner")
  static let retryLimit = ConfigKey<Int>("retry_limit", default: 3)
}

enum TourTheme: String, ConfigValueRepresentable {
  case light, dark
}

struct TourBanner: Codable, ConfigValueRepresentable {
  var title: String
  var priority: Int
}

/// The tour section on remote config.
///
/// By default it reads the embedded `Resources/config.json` through `FileConfigSource` (no
/// network). `--config-url URL` reads a JSON document from a server instead, polls it and
/// prints each update as it arrives (stop with Ctrl-C).
func configTour(_ arguments: TourArguments) async {
  print("\n-- Remote config --")
  let config: RemoteConfig
  if let url = arguments.configURL {
    print("Source: \(url.absoluteString)")
    config = RemoteConfig(
      source: HTTPConfigSource(url: url), settings: RemoteConfigSettings(fetchTimeout: 10))
  } else {
    guard
      let file = Bundle.module.url(
        forResource: "config", withExtension: "json", subdirectory: "Resources")
    else {
      print("The embedded config.json is missing from the tour's resources.")
      return
    }
    print("Source: the embedded config.json (no network)")
    config = RemoteConfig(source: FileConfigSource(url: file, watch: false))
  }

  // Until something is fetched and activated, lookups use defaults.
  code("config[.welcomeTitle]   // before fetching: the key's default")
  print("before fetching: welcome_title = \(config[.welcomeTitle])")
  code("try await config.fetchAndActivate()", "config[.welcomeTitle], config[.maxItems], …")
  do {
    try await config.fetchAndActivate()
  } catch {
    print("fetch failed: \(error); the defaults stay in place")
  }

  // The notes describe the embedded file; a server's document says what it says.
  let embedded = arguments.configURL == nil
  print("welcome_title = \(config[.welcomeTitle])")
  print(
    "max_items     = \(config[.maxItems])"
      + (embedded ? "   (the embedded file sends the string \"20\")" : ""))
  print(
    "new_checkout  = \(config[.newCheckout])" + (embedded ? "   (\"yes\" reads as true)" : ""))
  print("accent_color  = \(config[.accentColor])")
  print("launch_date   = \(config[.launchDate].map { $0.formatted(.iso8601) } ?? "none")")
  print("theme         = \(config[.theme])")
  print("tags          = \(config[.tags])")
  print(
    "banner        = \(config[.banner].map { "\($0.title) (priority \($0.priority))" } ?? "none")")
  print("source of max_items: \(config.configValue(for: .maxItems).source)")

  // A value that cannot be read as the key's type is never used: the default is.
  code("config[.retryLimit]; config[safeConfig: .retryLimit]; config.decodeErrors")
  print(
    "retry_limit   = \(config[.retryLimit])"
      + (embedded ? "   (the default: \"lots\" is not an Int)" : ""))
  print("safeConfig    = \(String(describing: config[safeConfig: .retryLimit]))")
  for error in config.decodeErrors { print("decode error: \(error)") }

  // @SharedReader follows the config: it changes whenever an activation changes the key.
  code("@SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title")
  @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
  print("@SharedReader title = \(title)")

  guard arguments.configURL != nil else {
    print("Run `swift run tour --config-url URL` to watch a server's config change live.")
    return
  }
  print("Polling every 5 s; change the document on the server to see updates (Ctrl-C stops).")
  let updates = config.updates.sink { update in
    print("update: \(update.updatedKeys.sorted().joined(separator: ", ")) changed")
  }
  // Subscribe before polling starts so the first poll's change is seen too.
  let titles = $title.values
  config.startPolling(every: .seconds(5))
  for await newTitle in titles.dropFirst() {
    print("@SharedReader title is now \(newTitle)")
  }
  updates.cancel()
}
