import Foundation
import Testing

@testable import TetherHTTP

/// A client remembers the URLs its endpoints made, by filled path and query: repeated calls
/// get the same URL without working it out again, different parameters never share one, and
/// the memo stays bounded.
@Suite struct EndpointURLMemoTests {
  struct Page: Encodable, Hashable, Sendable {
    var owner: String
    var page: Int?
  }

  static let items = Endpoint<Page, NoBody, Data>.get("/owners/{owner}/items")
  static let health = Endpoint<NoParameters, NoBody, Data>.get("/health")

  let client = HTTPClient(baseURL: URL(string: "http://127.0.0.1:1/api/?v=2")!)

  @Test func repeatedAndDifferentParametersGetTheirOwnURLs() throws {
    let cases: [(Page, String)] = [
      (Page(owner: "a"), "http://127.0.0.1:1/api/owners/a/items?v=2"),
      (Page(owner: "a", page: 2), "http://127.0.0.1:1/api/owners/a/items?v=2&page=2"),
      // A value that looks like the memo's own separators stays a value.
      (
        Page(owner: "a\u{0}page", page: 2),
        "http://127.0.0.1:1/api/owners/a%00page/items?v=2&page=2"
      ),
      (Page(owner: "b"), "http://127.0.0.1:1/api/owners/b/items?v=2"),
    ]
    for _ in 0..<3 {
      for (parameters, expected) in cases {
        #expect(try client.request(for: Self.items, parameters).url.absoluteString == expected)
      }
      #expect(
        try client.request(for: Self.health).url.absoluteString
          == "http://127.0.0.1:1/api/health?v=2")
    }
    #expect(client.endpointURLs.count == cases.count + 1)
  }

  @Test func aClientCallingManyDistinctURLsKeepsTheMemoBounded() throws {
    for id in 0..<(EndpointURLs.capacity * 3) {
      let url = try client.request(for: Self.items, Page(owner: "user\(id)")).url
      #expect(url.absoluteString == "http://127.0.0.1:1/api/owners/user\(id)/items?v=2")
      #expect(client.endpointURLs.count <= EndpointURLs.capacity)
    }
  }
}
