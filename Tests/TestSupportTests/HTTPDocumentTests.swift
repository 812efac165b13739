import Foundation
import TestSupport
import Testing

@Suite struct HTTPDocumentTests {
  @Test func computedETagsFollowTheBody() {
    let first = HTTPDocument(body: Data("v1".utf8))
    let same = HTTPDocument(body: Data("v1".utf8))
    let changed = HTTPDocument(body: Data("v2".utf8))
    #expect(first.etag == same.etag)
    #expect(first.etag != changed.etag)
    #expect(first.etag.hasPrefix("\"") && first.etag.hasSuffix("\""))
  }

  @Test func givenETagsAreQuotedOnce() {
    #expect(HTTPDocument(body: Data(), etag: "abc").etag == #""abc""#)
    #expect(HTTPDocument(body: Data(), etag: #""abc""#).etag == #""abc""#)
    #expect(HTTPDocument(body: Data(), etag: #"W/"abc""#).etag == #"W/"abc""#)
  }

  @Test func defaultsToJSON() {
    let document = HTTPDocument(body: Data("{}".utf8))
    #expect(document.contentType == "application/json")
    #expect(document.text == "{}")
    #expect(document.lastModified == nil)
  }
}
