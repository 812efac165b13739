import Foundation
import Streams
import TestSupport
import Testing
import TetherHTTP
import TetherSupport

/// `client.publisher(for:)`: one call per subscriber at its first demand, the decoded value
/// then `.finished`, the `HTTPError` as the failure, and cancellation cancelling the request.
@Suite struct HTTPCallPublisherTests {
  @Test func publishesTheDecodedValueOnDemandThenFinishes() async throws {
    let server = try TestHTTPServer()
    server.setDocument(json(Item(id: 7, name: "seven")), at: "/items/7")
    let client = HTTPClient(baseURL: server.baseURL)
    let publisher = client.publisher(for: Catalog.item, ItemPath(id: "7"))
    #expect(server.requestCount == 0)  // nothing happens before a subscriber asks
    let received = Lock<[String]>([])
    let cancellable = publisher.sink(
      receiveCompletion: { completion in received.withLock { $0.append("\(completion)") } },
      receiveValue: { item in received.withLock { $0.append(item.name) } })
    try await waitUntil("the value and the completion") { received.withLock { $0.count } == 2 }
    #expect(received.withLock { $0 } == ["seven", "finished"])
    #expect(server.requestCount == 1)
    cancellable.cancel()
  }

  @Test func eachSubscriberMakesItsOwnCall() async throws {
    let server = try TestHTTPServer()
    server.setDocument("[]", at: "/items")
    let client = HTTPClient(baseURL: server.baseURL)
    let publisher = client.publisher(for: Catalog.items)
    let finished = Lock(0)
    let first = publisher.sink(
      receiveCompletion: { _ in finished.withLock { $0 += 1 } }, receiveValue: { _ in })
    let second = publisher.sink(
      receiveCompletion: { _ in finished.withLock { $0 += 1 } }, receiveValue: { _ in })
    try await waitUntil("both completions") { finished.withLock { $0 } == 2 }
    #expect(server.requestCount == 2)
    _ = (first, second)
  }

  @Test func aFailureIsTheHTTPErrorSendWouldThrow() async throws {
    let server = try TestHTTPServer()
    server.inject(.status(404, body: "missing"))
    let client = HTTPClient(baseURL: server.baseURL)
    let completion = Lock<Subscribers.Completion<HTTPError>?>(nil)
    let cancellable = client.publisher(for: Catalog.item, ItemPath(id: "1"))
      .sink(receiveCompletion: { end in completion.withLock { $0 = end } }, receiveValue: { _ in })
    try await waitUntil("the failure") { completion.withLock { $0 } != nil }
    guard case .failure(.status(404, _, let excerpt, _)) = completion.withLock({ $0 }) else {
      Issue.record("expected a 404 failure, got \(String(describing: completion.withLock { $0 }))")
      return
    }
    #expect(excerpt == "missing")
    cancellable.cancel()
  }

  @Test func cancellingCancelsTheRequestAndDeliversNothing() async throws {
    let server = try TestHTTPServer()
    let stream = HTTPStream()
    server.inject(.stream(stream), at: "/items")
    let client = HTTPClient(baseURL: server.baseURL)
    let received = Lock(0)
    let cancellable = client.publisher(for: Catalog.items)
      .sink(
        receiveCompletion: { _ in received.withLock { $0 += 1 } },
        receiveValue: { _ in received.withLock { $0 += 1 } })
    try await stream.waitForClients(1)
    cancellable.cancel()
    try await stream.waitForNoClients()
    #expect(received.withLock { $0 } == 0)
  }

  @Test func aBodyIsSentWithTheCall() async throws {
    let server = try TestHTTPServer()
    server.setHandler(at: "/items") { request in HTTPResponse(status: 201, body: request.text) }
    let client = HTTPClient(baseURL: server.baseURL)
    let values = client.publisher(for: Catalog.create, body: Item(id: 3, name: "three")).values
    var created: [Item] = []
    for try await item in values { created.append(item) }
    #expect(created == [Item(id: 3, name: "three")])
  }
}
