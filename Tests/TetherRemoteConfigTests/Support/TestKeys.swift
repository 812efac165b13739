import Foundation
import TetherRemoteConfig

struct Banner: Codable, Hashable, ConfigValueRepresentable {
  var title: String
  var priority: Int
}

enum Theme: String, Codable, ConfigValueRepresentable {
  case light, dark
}

enum Level: Int, ConfigValueRepresentable {
  case low = 1, high = 2
}

extension ConfigKeys {
  static let welcomeTitle = ConfigKey<String>("welcome_title", default: "Welcome")
  static let maxItems = ConfigKey<Int>("max_items", default: 10)
  static let ratio = ConfigKey<Double>("ratio", default: 0.5)
  static let newCheckout = ConfigKey<Bool>("new_checkout", default: false)
  static let banner = ConfigKey<Banner?>("banner")
  static let theme = ConfigKey<Theme>("theme", default: .light)
  static let tags = ConfigKey<[String]>("tags")
  static let launchDate = ConfigKey<Date?>("launch_date")
  static let limits = ConfigKey<[String: Int]>("limits")
  static let plain = ConfigKey<String>("plain")
}

/// A JSON config document from a Swift dictionary literal of JSON text values.
func document(_ entries: KeyValuePairs<String, String>) -> String {
  "{" + entries.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
}
