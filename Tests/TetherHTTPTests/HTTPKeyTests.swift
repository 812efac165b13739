import Foundation
import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherHTTP
import TetherSupport

@Suite struct HTTPKeyTests {
  static let events = Endpoint<ItemPath, NoBody, NoBody>.get("/items/{id}/events")

  @Test func loadsWithOneGetThenPollsConditionally() async throws {
    let server = try TestHTTPServer()
    let first = server.setDocument(json(Item(id: 1, name: "one")), at: "/items/1")
    let client = HTTPClient(baseURL: server.baseURL)
    @SharedReader(.http(Catalog.item, ItemPath(id: "1"), client: client, every: .milliseconds(20)))
    var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    try await waitUntil("three conditional polls") {
      server.requests(at: "/items/1").filter { $0.header("If-None-Match") != nil }.count >= 3
    }
    // The load, and on a slow machine a poll that started before the load's answer arrived,
    // are unconditional; every request after them carries the loaded ETag.
    let requests = server.requests(at: "/items/1")
    let unconditional = requests.prefix { $0.header("If-None-Match") == nil }.count
    #expect(unconditional <= 3)
    #expect(
      requests.dropFirst(unconditional).allSatisfy { $0.header("If-None-Match") == first.etag })

    server.setDocument(json(Item(id: 1, name: "changed")), at: "/items/1")
    try await waitUntil("the changed value") { item.name == "changed" }
    #expect($item.loadError == nil)
  }

  @Test func aNotModifiedAnswerCostsNoDecoding() async throws {
    let server = try TestHTTPServer()
    server.setDocument(
      json(Item(id: 1, name: "one")), at: "/items/1", lastModified: Date(timeIntervalSince1970: 1e9)
    )
    let decodes = Lock(0)
    let counting = Endpoint<ItemPath, NoBody, Item>(
      method: .get, path: "/items/{id}", encodeBody: { _ in nil },
      decodeResponse: { data in
        decodes.withLock { $0 += 1 }
        return try JSONDecoder().decode(Item.self, from: data)
      })
    let client = HTTPClient(baseURL: server.baseURL)
    @SharedReader(.http(counting, ItemPath(id: "1"), client: client, every: .milliseconds(20)))
    var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    // Once polls are conditional (a poll may start before the load's answer arrived), the
    // 304s that follow decode nothing.
    try await waitUntil("a conditional poll") {
      server.requests(at: "/items/1").contains { $0.header("If-None-Match") != nil }
    }
    let decoded = decodes.withLock { $0 }
    let count = server.requestCount(at: "/items/1")
    try await server.waitForRequests(count + 4, at: "/items/1")
    #expect(decodes.withLock { $0 } == decoded)
    #expect(decoded <= 2)
    #expect(server.requests(at: "/items/1").last?.header("If-Modified-Since") != nil)
  }

  @Test func failuresSetLoadErrorKeepTheValueAndRecover() async throws {
    let server = try TestHTTPServer()
    server.setDocument(json(Item(id: 1, name: "one")), at: "/items/1")
    let client = HTTPClient(baseURL: server.baseURL, retryPolicy: .none)
    @SharedReader(.http(Catalog.item, ItemPath(id: "1"), client: client, every: .milliseconds(20)))
    var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    server.inject(.status(500), at: "/items/1", count: 2)
    try await waitUntil("the failure") { (statusOfLoadError($item)) == 500 }
    #expect(item.name == "one")
    server.setDocument(json(Item(id: 1, name: "two")), at: "/items/1")
    try await waitUntil("recovery") { item.name == "two" }
  }

  @Test func unauthorizedStopsPollingWithLoadError() async throws {
    let server = try TestHTTPServer()
    server.setDocument(json(Item(id: 1, name: "one")), at: "/items/1")
    server.setDocument(json(Item(id: 2, name: "witness")), at: "/items/2")
    let client = HTTPClient(baseURL: server.baseURL)
    @SharedReader(.http(Catalog.item, ItemPath(id: "1"), client: client, every: .milliseconds(20)))
    var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    server.injectPersistently(.status(401), at: "/items/1")
    try await waitUntil("the 401") { statusOfLoadError($item) == 401 }
    let count = server.requestCount(at: "/items/1")
    // A witness polling at the same pace: after it made five more requests, the stopped key
    // would have made some too.
    @SharedReader(.http(Catalog.item, ItemPath(id: "2"), client: client, every: .milliseconds(20)))
    var witness = Item(id: 0, name: "default")
    try await server.waitForRequests(6, at: "/items/2")
    #expect(witness.name == "witness")
    #expect(server.requestCount(at: "/items/1") == count)
  }

  @Test func pollingStopsWhenTheLastHolderGoesAway() async throws {
    let server = try TestHTTPServer()
    server.setDocument(json(Item(id: 1, name: "one")), at: "/items/1")
    server.setDocument(json(Item(id: 2, name: "witness")), at: "/items/2")
    let client = HTTPClient(baseURL: server.baseURL)
    var holder: SharedReader<Item>? = SharedReader(
      wrappedValue: Item(id: 0, name: "default"),
      .http(Catalog.item, ItemPath(id: "1"), client: client, every: .milliseconds(20)))
    try await server.waitForRequests(3, at: "/items/1")
    #expect(holder?.wrappedValue.name == "one")
    holder = nil
    let count = server.requestCount(at: "/items/1")
    @SharedReader(.http(Catalog.item, ItemPath(id: "2"), client: client, every: .milliseconds(20)))
    var witness = Item(id: 0, name: "default")
    try await server.waitForRequests(6, at: "/items/2")
    #expect(witness.name == "witness")
    // At most the poll that was already on its way.
    #expect(server.requestCount(at: "/items/1") <= count + 1)
  }

  @Test func serverSentEventsPushChangesAndCloseWithTheLastHolder() async throws {
    let server = try TestHTTPServer()
    server.setDocument(json(Item(id: 1, name: "one")), at: "/items/1")
    let stream = HTTPStream.serverSentEvents()
    server.injectPersistently(.stream(stream), at: "/items/1/events")
    let client = HTTPClient(baseURL: server.baseURL)
    var holder: SharedReader<Item>? = SharedReader(
      wrappedValue: Item(id: 0, name: "default"),
      .http(
        Catalog.item, ItemPath(id: "1"), client: client,
        updates: .serverSentEvents(Self.events, ItemPath(id: "1"))))
    try await stream.waitForClients(1)
    try await waitUntil("the loaded value") { holder?.wrappedValue.name == "one" }

    stream.sendEvent(json(Item(id: 1, name: "pushed")), id: "7")
    try await waitUntil("the pushed value") { holder?.wrappedValue.name == "pushed" }

    // An event without data means "changed": the key fetches the resource.
    server.setDocument(json(Item(id: 1, name: "fetched")), at: "/items/1")
    stream.sendEvent("")
    try await waitUntil("the fetched value") { holder?.wrappedValue.name == "fetched" }
    #expect(server.requests(at: "/items/1/events").first?.header("Accept") == "text/event-stream")

    holder = nil
    try await stream.waitForNoClients()
  }

  @Test func theStreamReconnectsWithTheLastEventID() async throws {
    let server = try TestHTTPServer()
    server.setDocument(json(Item(id: 1, name: "one")), at: "/items/1")
    let first = HTTPStream.serverSentEvents()
    let second = HTTPStream.serverSentEvents()
    server.inject(.stream(first), at: "/items/1/events")
    server.inject(.stream(second), at: "/items/1/events")
    let client = HTTPClient(baseURL: server.baseURL)
    @SharedReader(
      .http(
        Catalog.item, ItemPath(id: "1"), client: client,
        updates: .serverSentEvents(Self.events, ItemPath(id: "1"))))
    var item = Item(id: 0, name: "default")
    try await first.waitForClients(1)
    first.send("retry: 10\n")
    first.sendEvent(json(Item(id: 1, name: "first")), id: "41")
    try await waitUntil("the first event") { item.name == "first" }
    first.abort()
    try await second.waitForClients(1)
    #expect(server.requests(at: "/items/1/events").last?.header("Last-Event-ID") == "41")
    second.sendEvent(json(Item(id: 1, name: "second")), id: "42")
    try await waitUntil("the event after reconnecting") { item.name == "second" }
  }

  @Test func theIDIncludesBaseURLPathAndParameters() throws {
    let a = HTTPClient(baseURL: URL(string: "http://127.0.0.1:1")!)
    let b = HTTPClient(baseURL: URL(string: "http://127.0.0.1:2")!)
    func key(_ client: HTTPClient, _ id: String) -> HTTPKey<ItemPath, Item> {
      .http(Catalog.item, ItemPath(id: id), client: client, every: .seconds(1))
    }
    #expect(key(a, "1").id == key(a, "1").id)
    #expect(key(a, "1").id != key(a, "2").id)
    #expect(key(a, "1").id != key(b, "1").id)
  }
}

/// The status code of a holder's `loadError`, if it is an ``HTTPError`` with one.
func statusOfLoadError<Value>(_ reader: SharedReader<Value>) -> Int? {
  (reader.loadError as? HTTPError)?.statusCode
}
