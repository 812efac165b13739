import Foundation
import TestSupport
import Tether
import TetherHTTP

// http-status: declares a small HTTP API, calls it, and keeps @SharedReader values fresh from
// a local server it starts itself — by conditional polling and by server-sent events.
//
//   swift run http-status

struct Status: Codable, Equatable, Sendable {
  var version: Int
  var message: String
}

struct Greeting: Codable, Sendable {
  var text: String
}

struct GreetingRequest: Encodable, Hashable, Sendable {
  var name: String  // fills {name}
  var language: String?  // the query: ?language=fr
}

/// The API, declared once.
enum StatusAPI {
  static let status = Endpoint<NoParameters, NoBody, Status>.get("/status")
  static let liveStatus = Endpoint<NoParameters, NoBody, Status>.get("/live/status")
  static let statusEvents = Endpoint<NoParameters, NoBody, NoBody>.get("/live/status/events")
  static let greeting = Endpoint<GreetingRequest, NoBody, Greeting>.get("/greetings/{name}")
}

/// Waits until `condition` holds, checking every 10 ms (at most 5 s).
func wait(_ what: String, until condition: () -> Bool) async throws {
  let deadline = ContinuousClock.now + .seconds(5)
  while !condition() {
    guard ContinuousClock.now < deadline else { throw CancellationError() }
    try await Task.sleep(for: .milliseconds(10))
  }
}

/// The tour: a typed call, a typed error, a polled value and a pushed value.
func run() async throws {
  let server = try TestHTTPServer()
  try server.setJSONDocument(Status(version: 1, message: "all good"), at: "/status")
  try server.setJSONDocument(Greeting(text: "Bonjour, Ada"), at: "/greetings/Ada")
  let events = HTTPStream.serverSentEvents()
  try server.setJSONDocument(Status(version: 2, message: "live"), at: "/live/status")
  server.injectPersistently(.stream(events), at: "/live/status/events")
  print("serving on \(server.baseURL)")

  let api = HTTPClient(baseURL: server.baseURL, headers: ["Authorization": "Bearer demo"])

  // 1. A typed call.
  let greeting = try await api.send(
    StatusAPI.greeting, GreetingRequest(name: "Ada", language: "fr"))
  print("greeting: \(greeting.text)  (GET \(server.requests.last?.description ?? ""))")

  // 2. One typed error for everything that can go wrong.
  do {
    _ = try await api.send(StatusAPI.greeting, GreetingRequest(name: "Nobody"))
  } catch {
    print("error: \(error)")
  }

  // 3. A shared value polled conditionally: unchanged polls are 304s and decode nothing.
  @SharedReader(.http(StatusAPI.status, client: api, every: .milliseconds(100)))
  var polled = Status(version: 0, message: "loading")
  try await wait("the first load") { polled.version == 1 }
  print("polled: v\(polled.version) \(polled.message)")
  try server.setJSONDocument(Status(version: 2, message: "deploying"), at: "/status")
  try await wait("the next poll") { polled.version == 2 }
  print("polled: v\(polled.version) \(polled.message)")

  // 4. A resource pushed by server-sent events: no polling delay. (Declarations of the same
  // resource share one value, so this one lives at another path.)
  @SharedReader(
    .http(StatusAPI.liveStatus, client: api, updates: .serverSentEvents(StatusAPI.statusEvents)))
  var live = Status(version: 0, message: "loading")
  try await events.waitForClients(1)
  try await wait("the first load") { live.version >= 2 }
  let start = ContinuousClock.now
  events.sendEvent(#"{"version":3,"message":"pushed"}"#)
  try await wait("the pushed value") { live.version == 3 }
  print("pushed: v\(live.version) \(live.message) after \(ContinuousClock.now - start)")

  let conditional = server.requests(at: "/status").filter { $0.header("If-None-Match") != nil }
  print("conditional polls so far: \(conditional.count)")
  server.stop()
}

try await run()
