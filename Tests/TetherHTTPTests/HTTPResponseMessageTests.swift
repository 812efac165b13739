import Foundation
import Testing
import TetherHTTP

/// The header values the layer acts on are range-checked (issue #9, item 2).
@Suite struct HTTPResponseMessageTests {
  static func response(_ name: String, _ value: String) -> HTTPResponseMessage {
    HTTPResponseMessage(status: 200, headers: [name: value])
  }

  @Test(arguments: [
    ("120", 120.0), ("0", 0), ("9223372036854775807", 86_400), ("99999999999", 86_400),
    ("999999999999999999999999999999", 86_400),
  ])
  func retryAfterSecondsAreClampedToADay(_ text: String, _ expected: Double) {
    #expect(Self.response("Retry-After", text).retryAfter == expected)
  }

  @Test(arguments: ["-5", "1.5", "soon", "", "Sun, 06 Nov 1994 08:49:37 XYZ"])
  func malformedRetryAfterIsIgnored(_ text: String) {
    #expect(Self.response("Retry-After", text).retryAfter == nil)
  }

  @Test func retryAfterAsAnHTTPDate() throws {
    let past = Self.response("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(past.retryAfter == 0)
    let far = Self.response("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT")
    #expect(far.retryAfter == 86_400)
  }

  @Test(
    arguments: [
      ("max-age=600", 600), ("public, max-age=99999999999999999999", Int(Int32.max)),
      ("=", nil), ("max-age=", nil), ("max-age=-1", nil), ("no-cache", nil), (",=,", nil),
    ] as [(String, Int?)])
  func maxAgeIsRangeChecked(_ text: String, _ expected: Int?) {
    #expect(Self.response("Cache-Control", text).maxAge == expected)
  }

  @Test func onlyWellFormedValidatorsAreEchoed() {
    #expect(Self.response("ETag", #""abc""#).etag == #""abc""#)
    #expect(Self.response("ETag", #"W/"abc""#).etag == #"W/"abc""#)
    #expect(Self.response("ETag", "abc").etag == nil)
    #expect(Self.response("ETag", "\"a\r\nX-Injected: 1\"").etag == nil)
    #expect(
      Self.response("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT").lastModifiedDate
        == Date(timeIntervalSince1970: 784_111_777))
    #expect(Self.response("Last-Modified", "yesterday").lastModified == nil)
  }
}
