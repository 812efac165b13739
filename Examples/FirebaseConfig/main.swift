import Foundation
import TestSupport
import Tether
import TetherRemoteConfig

// firebase-config: reads Firebase Remote Config with no Firebase SDK, realtime included.
//
//   swift run firebase-config
//       against a fake Firebase server it starts itself: fetches, then publishes a new
//       template and shows it arriving over the realtime stream.
//   FIREBASE_API_KEY=… FIREBASE_PROJECT_ID=… FIREBASE_APP_ID=… swift run firebase-config
//       against your project (the values of the console's app config): fetches, prints the
//       entries, then prints each realtime update until interrupted.

extension ConfigKeys {
  static let welcomeTitle = ConfigKey<String>("welcome_title", default: "Welcome")
  static let maxItems = ConfigKey<Int>("max_items", default: 10)
}

/// Waits until `condition` holds, checking every 10 ms (at most 10 s).
func wait(_ what: String, until condition: () -> Bool) async throws {
  let deadline = ContinuousClock.now + .seconds(10)
  while !condition() {
    guard ContinuousClock.now < deadline else {
      print("gave up waiting for \(what)")
      throw CancellationError()
    }
    try await Task.sleep(for: .milliseconds(10))
  }
}

let environment = ProcessInfo.processInfo.environment
let cacheURL = FileManager.default.temporaryDirectory
  .appendingPathComponent("firebase-config-example.json")

if let apiKey = environment["FIREBASE_API_KEY"], let projectID = environment["FIREBASE_PROJECT_ID"],
  let appID = environment["FIREBASE_APP_ID"]
{
  let source = FirebaseConfigSource(
    apiKey: apiKey, projectID: projectID, appID: appID, realtime: FirebaseRealtimeSettings())
  let config = RemoteConfig(source: source, cacheURL: cacheURL)
  try await config.fetchAndActivate()
  for key in config.activeKeys.sorted() {
    print("\(key) = \(config.configValue(forKey: key).stringValue)")
  }
  print("installation \(await source.installationID ?? "?"); waiting for realtime updates")
  for await update in config.updates.values {
    for key in update.updatedKeys.sorted() {
      print("updated \(key) = \(config.configValue(forKey: key).stringValue)")
    }
  }
} else {
  let firebase = try FirebaseFakeServer()
  firebase.publish(["welcome_title": "Hello from the fake Firebase", "max_items": "20"])
  let source = FirebaseConfigSource(
    apiKey: firebase.apiKey, projectID: firebase.projectID, appID: firebase.appID,
    realtime: FirebaseRealtimeSettings(), endpoints: .all(at: firebase.baseURL))
  // A fresh cache per run: the fake's template versions restart at 1.
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("firebase-config-\(UUID().uuidString)")
  defer { try? FileManager.default.removeItem(at: directory) }
  let cacheURL = directory.appendingPathComponent("remote-config.json")
  let config = RemoteConfig(source: source, cacheURL: cacheURL)
  try await config.fetchAndActivate()
  @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
  print("fetched: \(title), max_items \(config[.maxItems]) (template \(firebase.templateVersion))")

  try await wait("the realtime stream") { source.realtimeState == .connected }
  firebase.publish(["welcome_title": "Published a moment ago", "max_items": "25"])
  try await wait("the realtime update") { title == "Published a moment ago" }
  print("realtime: \(title), max_items \(config[.maxItems]) (template \(firebase.templateVersion))")
  print("installation \(await source.installationID ?? "?") kept next to \(cacheURL.path)")
}
