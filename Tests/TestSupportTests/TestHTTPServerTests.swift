import Foundation
import TestSupport
import Testing

@Suite struct TestHTTPServerTests {
  @Test func servesADocumentWithBodyAndHeaders() async throws {
    let server = try TestHTTPServer()
    let document = server.setDocument(
      #"{"welcome_title":"Hi"}"#, at: "/config.json", headers: ["Cache-Control": "no-store"])

    let (body, response) = try await HTTPClient.fetch(server.url(for: "/config.json"))

    #expect(response.statusCode == 200)
    #expect(String(decoding: body, as: UTF8.self) == #"{"welcome_title":"Hi"}"#)
    #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
    #expect(response.value(forHTTPHeaderField: "ETag") == document.etag)
    #expect(response.value(forHTTPHeaderField: "Cache-Control") == "no-store")
  }

  @Test func answersIfNoneMatchWith304WhileTheETagMatches() async throws {
    let server = try TestHTTPServer()
    let first = server.setDocument("v1", at: "/c")

    let (notModifiedBody, notModified) = try await HTTPClient.fetch(
      server.url(for: "/c"), headers: ["If-None-Match": first.etag])
    #expect(notModified.statusCode == 304)
    #expect(notModifiedBody.isEmpty)
    #expect(notModified.value(forHTTPHeaderField: "ETag") == first.etag)

    let second = server.setDocument("v2", at: "/c")
    #expect(second.etag != first.etag)
    let (body, changed) = try await HTTPClient.fetch(
      server.url(for: "/c"), headers: ["If-None-Match": first.etag])
    #expect(changed.statusCode == 200)
    #expect(String(decoding: body, as: UTF8.self) == "v2")
    #expect(
      server.requests(at: "/c").map { $0.header("if-none-match") } == [first.etag, first.etag])
  }
}
