import Foundation

/// The app metadata a ``FirebaseConfigSource`` sends with every fetch, which Firebase's
/// conditions can target (app version, language, country, …).
///
/// Every field is optional: a field left `nil` is not sent. The defaults send the process's
/// language and time zone, as the Firebase SDKs do.
///
/// ```swift
/// let app = FirebaseAppInfo(appVersion: "2.4.0", appBuild: "418", packageName: "com.example.api")
/// ```
public struct FirebaseAppInfo: Sendable, Hashable {
  /// `app_version`: the marketing version, such as `2.4.0`.
  public var appVersion: String?
  /// `app_build`: the build number.
  public var appBuild: String?
  /// `package_name`: the bundle identifier or package name.
  public var packageName: String?
  /// `platform_version`: the operating system version.
  public var platformVersion: String?
  /// `language_code`, such as `en-US`. Defaults to the process's locale.
  public var languageCode: String?
  /// `country_code`, such as `US`.
  public var countryCode: String?
  /// `time_zone`, such as `Europe/Paris`. Defaults to the process's time zone.
  public var timeZone: String?
  /// `first_open_time`: when the app first ran, for "first open" conditions.
  public var firstOpenTime: Date?
  /// `analytics_user_properties`: user properties for conditions that use them (Tether sends
  /// them; it logs no analytics).
  public var analyticsUserProperties: [String: String]

  /// Creates app metadata.
  public init(
    appVersion: String? = nil, appBuild: String? = nil, packageName: String? = nil,
    platformVersion: String? = nil,
    languageCode: String? = Locale.current.identifier.replacingOccurrences(of: "_", with: "-"),
    countryCode: String? = nil, timeZone: String? = TimeZone.current.identifier,
    firstOpenTime: Date? = nil, analyticsUserProperties: [String: String] = [:]
  ) {
    self.appVersion = appVersion
    self.appBuild = appBuild
    self.packageName = packageName
    self.platformVersion = platformVersion
    self.languageCode = languageCode
    self.countryCode = countryCode
    self.timeZone = timeZone
    self.firstOpenTime = firstOpenTime
    self.analyticsUserProperties = analyticsUserProperties
  }

  /// The fields as the fetch body names them.
  var fetchFields: [String: JSONValue] {
    var fields: [String: JSONValue] = [:]
    let texts: [(String, String?)] = [
      ("app_version", appVersion), ("app_build", appBuild), ("package_name", packageName),
      ("platform_version", platformVersion), ("language_code", languageCode),
      ("country_code", countryCode), ("time_zone", timeZone),
    ]
    for (name, value) in texts { if let value { fields[name] = .string(value) } }
    if let firstOpenTime {
      fields["first_open_time"] = .string(ISO8601DateFormatter().string(from: firstOpenTime))
    }
    if !analyticsUserProperties.isEmpty {
      fields["analytics_user_properties"] = .object(
        analyticsUserProperties.mapValues(JSONValue.string))
    }
    return fields
  }
}
