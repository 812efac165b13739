import Foundation
import TestSupport
import Testing
import Tether
import TetherHTTP

/// A writable `.http` key's value is what the server holds, and it never overwrites a version
/// it has not seen, whatever validators the resource offers.
@Suite struct HTTPResourceFidelityTests {
  static func key(
    _ client: HTTPClient, lastWriterWins: Bool = false
  ) -> HTTPResourceKey<ItemPath, Item> {
    .http(
      Catalog.item, save: Catalog.replace, ItemPath(id: "1"), client: client,
      every: .seconds(60), lastWriterWins: lastWriterWins)
  }

  // Guards: the value kept the body that was sent, so fields the server computes never
  // arrived (and later polls answered 304 forever).
  @Test func aSaveAnsweredWithARepresentationTakesWhatTheServerStored() async throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    // The server upper-cases the name it stores, as a server computing a field would.
    let resource = WritableResource(json(Item(id: 1, name: "one"))) { body in
      let item = try! JSONDecoder().decode(Item.self, from: body)
      return Data(json(Item(id: item.id, name: item.name.uppercased())).utf8)
    }
    server.serve(resource, at: "/items/1")
    @Shared(Self.key(HTTPClient(baseURL: server.baseURL))) var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    $item.withLock { $0.name = "mine" }
    try await waitUntil("the stored value") { item.name == "MINE" }
    #expect($item.saveError == nil)
    // `update` returns the stored value too.
    let updated = try await $item.update { item -> Item in
      item.name = "again"
      return item
    }
    #expect(updated.id == 1)
    #expect(item.name == "AGAIN")
  }

  // Guards: a resource with only a weak ETag or Last-Modified was saved with no precondition,
  // and another writer's change was silently overwritten.
  @Test(arguments: [
    WritableResource.Validators.weakETagAndLastModified, .lastModifiedOnly,
  ])
  func withoutAStrongETagASaveIsConditionalOnLastModified(
    _ validators: WritableResource.Validators
  ) async throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    let resource = WritableResource(json(Item(id: 1, name: "one")), validators: validators)
    server.serve(resource, at: "/items/1")
    @Shared(Self.key(HTTPClient(baseURL: server.baseURL))) var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    resource.replace(with: json(Item(id: 1, name: "theirs")))  // another writer
    $item.withLock { $0.name = "mine" }
    try await waitUntil("the conflict") {
      if case .conflict? = $item.saveError as? HTTPError { return true } else { return false }
    }
    let put = try #require(server.requests(at: "/items/1").first { $0.method == "PUT" })
    #expect(put.header("If-Match") == nil)
    #expect(put.header("If-Unmodified-Since") != nil)
    try await waitUntil("the newer value") { item.name == "theirs" }
    #expect(resource.acceptedWrites == 0)
  }

  // Guards: after a 412, saveError stayed set even once a later `update` had succeeded.
  @Test func aSuccessfulUpdateClearsTheConflictOfAnEarlierSave() async throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    let resource = WritableResource(json(Item(id: 1, name: "one")))
    server.serve(resource, at: "/items/1")
    @Shared(Self.key(HTTPClient(baseURL: server.baseURL))) var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    resource.replace(with: json(Item(id: 1, name: "theirs")))
    $item.withLock { $0.name = "mine" }
    try await waitUntil("the conflict") { $item.saveError != nil }
    try await $item.update { $0.name = "merged" }
    #expect($item.saveError == nil)
    #expect(item.name == "merged")
    #expect(resource.document.text.contains("merged"))
  }

  @Test func withoutAnyValidatorASaveFailsUnlessTheKeyOptedIntoLastWriterWins() async throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    let resource = WritableResource(json(Item(id: 1, name: "one")), validators: .none)
    server.serve(resource, at: "/items/1")
    let client = HTTPClient(baseURL: server.baseURL)
    @Shared(Self.key(client)) var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    $item.withLock { $0.name = "mine" }
    try await waitUntil("the refusal") {
      if case .invalidRequest? = $item.saveError as? HTTPError {
        return true
      } else {
        return false
      }
    }
    #expect(resource.acceptedWrites == 0)
    #expect(!server.requests(at: "/items/1").contains { $0.method == "PUT" })

    let server2 = try TestHTTPServer()
    defer { server2.stop() }
    let resource2 = WritableResource(json(Item(id: 1, name: "one")), validators: .none)
    server2.serve(resource2, at: "/items/1")
    @Shared(Self.key(HTTPClient(baseURL: server2.baseURL), lastWriterWins: true))
    var overwriting = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { overwriting.name == "one" }
    $overwriting.withLock { $0.name = "mine" }
    try await waitUntil("the unconditional save") { resource2.acceptedWrites == 1 }
    #expect($overwriting.saveError == nil)
  }

  // Guards: `send` had no per-call headers and could not return the response's headers.
  @Test func sendTakesPerCallHeadersAndResponseReturnsTheValueWithItsHeaders() async throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    let document = try server.setJSONDocument(Item(id: 1, name: "one"), at: "/items/1")
    let client = HTTPClient(baseURL: server.baseURL, headers: ["X-Client": "c"])
    let item = try await client.send(
      Catalog.item, ItemPath(id: "1"), headers: ["X-Call": "1", "x-client": "override"])
    #expect(item == Item(id: 1, name: "one"))
    let sent = try #require(server.requests(at: "/items/1").last)
    #expect(sent.header("X-Call") == "1")
    #expect(sent.header("X-Client") == "override")

    let answer = try await client.response(for: Catalog.item, ItemPath(id: "1"))
    #expect(answer.value == item)
    #expect(answer.status == 200)
    #expect(answer.etag == document.etag)
    // The no-body, no-parameters overloads exist on every entry point.
    let request = try client.request(for: Catalog.items)
    #expect(request.url.path == "/items")
    #expect(try client.request(for: Catalog.item, ItemPath(id: "1")).method == .get)
  }
}
