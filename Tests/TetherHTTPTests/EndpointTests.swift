import Foundation
import TestSupport
import Testing
import TetherHTTP

struct Search: Encodable, Hashable, Sendable {
  var owner: String
  var query: String
  var tags: [String] = []
  var limit: Int? = nil
  var exact: Bool = false
}

struct Mismatch: Encodable, Hashable, Sendable {
  var name: String
}

@Suite struct EndpointTests {
  static let search = Endpoint<Search, NoBody, [Item]>.get("/owners/{owner}/items")

  @Test func placeholdersAreFilledPercentEncodedAndTheRestIsTheQuery() async throws {
    let server = try TestHTTPServer()
    server.setDocument("[]", at: "/owners/a%2Fb%20c/items")
    let client = HTTPClient(baseURL: server.baseURL)
    let items = try await client.send(
      Self.search, Search(owner: "a/b c", query: "x&y=z é", tags: ["red", "blue"]))
    #expect(items.isEmpty)
    let request = try #require(server.requests.first)
    #expect(request.path == "/owners/a%2Fb%20c/items")
    #expect(request.query == "query=x%26y%3Dz%20%C3%A9&tags=red&tags=blue&exact=false")
    #expect(request.header("Accept") == "application/json")
  }

  /// A value with dots that is not a dot-segment stays one segment as written.
  @Test func aValueWithDotsThatIsNotADotSegmentIsSentAsWritten() async throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.setDocument("[]", at: "/owners/.../items")
    let client = HTTPClient(baseURL: server.baseURL)
    _ = try await client.send(Self.search, Search(owner: "...", query: "q"))
    #expect(try #require(server.requests.first).path == "/owners/.../items")
  }

  @Test func nilParametersAreLeftOut() throws {
    let client = HTTPClient(baseURL: URL(string: "http://127.0.0.1:1/api/")!)
    let request = try client.request(
      for: Self.search, Search(owner: "o", query: "q", limit: 5), body: NoBody())
    #expect(
      request.url.absoluteString
        == "http://127.0.0.1:1/api/owners/o/items?query=q&limit=5&exact=false")
    #expect(request.body == nil)
  }

  @Test func aPlaceholderWithoutAParameterIsAClearErrorOnFirstUse() async throws {
    let endpoint = Endpoint<Mismatch, NoBody, Item>.get("/users/{user}")
    let client = HTTPClient(baseURL: URL(string: "http://127.0.0.1:1")!)
    await #expect {
      try await client.send(endpoint, Mismatch(name: "x"))
    } throws: { error in
      guard case .invalidRequest(let reason) = error as? HTTPError else { return false }
      return reason.contains("{user}") && reason.contains("Mismatch")
    }
    let unclosed = Endpoint<Mismatch, NoBody, Item>.get("/users/{name")
    #expect(throws: HTTPError.self) {
      try client.request(for: unclosed, Mismatch(name: "x"), body: NoBody())
    }
    let missing = Endpoint<ItemPath, NoBody, Item>.get("/items/{id}/{expand}")
    #expect(throws: HTTPError.self) {
      try client.request(for: missing, ItemPath(id: "1"), body: NoBody())
    }
  }

  @Test func aBodyIsEncodedAsJSONAndTheResponseDecoded() async throws {
    let server = try TestHTTPServer()
    server.setHandler(at: "/items") { request in
      HTTPResponse(status: 201, headers: ["Content-Type": "application/json"], body: request.body)
    }
    let client = HTTPClient(baseURL: server.baseURL)
    let created = try await client.send(Catalog.create, body: Item(id: 7, name: "seven"))
    #expect(created == Item(id: 7, name: "seven"))
    let request = try #require(server.requests.first)
    #expect(request.method == "POST")
    #expect(request.header("Content-Type") == "application/json")
  }

  @Test func anUndecodableResponseNamesTheCodingPath() async throws {
    let server = try TestHTTPServer()
    server.setDocument(#"[{"id": 1, "name": "a"}, {"id": "two", "name": "b"}]"#, at: "/items")
    let client = HTTPClient(baseURL: server.baseURL)
    await #expect {
      try await client.send(Catalog.items)
    } throws: { error in
      guard case .undecodable(_, let path, _) = error as? HTTPError else { return false }
      return path == "[1].id" && "\(error)".contains("[1].id")
    }
  }

  @Test func anUnacceptableStatusCarriesABoundedExcerpt() async throws {
    let server = try TestHTTPServer()
    server.inject(
      .status(404, body: String(repeating: "no such item. ", count: 200)), at: "/items/9")
    let client = HTTPClient(baseURL: server.baseURL)
    do {
      _ = try await client.send(Catalog.item, ItemPath(id: "9"))
      Issue.record("expected an error")
    } catch {
      guard case .status(404, _, let excerpt, nil) = error else {
        Issue.record("got \(error)")
        return
      }
      #expect(excerpt.hasPrefix("no such item."))
      #expect(excerpt.count <= 513)
      #expect(error.localizedDescription.contains("HTTP 404"))
    }
  }
}
