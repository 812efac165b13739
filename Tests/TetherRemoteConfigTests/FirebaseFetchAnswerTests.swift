import Foundation
import TestSupport
import Testing
import TetherHTTP
import TetherRemoteConfig

/// What each class of fetch answer means, read from status, headers and body alone.
@Suite struct FirebaseFetchAnswerTests {
  static func answer(
    _ status: Int, _ body: String = "", headers: [String: String] = [:]
  ) -> FirebaseFetchAnswer {
    FirebaseFetchAnswer(
      HTTPResponseMessage(status: status, headers: headers, body: Data(body.utf8)))
  }

  @Test func a200WithEntriesIsATemplateWithItsVersionAndETag() {
    let answer = Self.answer(
      200,
      #"{"entries":{"max_items":"20","new_checkout":"true"},"state":"UPDATE","#
        + #""templateVersion":"7","experimentDescriptions":[]}"#,
      headers: ["ETag": "etag-7"])
    #expect(
      answer
        == .template(
          entries: ["max_items": "20", "new_checkout": "true"], version: 7, etag: "etag-7"))
  }

  @Test func a200WithoutEntriesIsAnEmptyTemplate() {
    #expect(Self.answer(200, "{}") == .template(entries: [:], version: nil, etag: nil))
    #expect(
      Self.answer(200, #"{"entries":"not an object","templateVersion":3}"#)
        == .template(entries: [:], version: 3, etag: nil))
  }

  @Test(arguments: ["NO_TEMPLATE", "EMPTY_CONFIG"])
  func anEmptyProjectIsAnEmptyTemplate(state: String) {
    // The state wins over any entries sent with it.
    let answer = Self.answer(
      200, #"{"state":"\#(state)","entries":{"stale":"1"},"templateVersion":"2"}"#,
      headers: ["ETag": "e2"])
    #expect(answer == .template(entries: [:], version: 2, etag: "e2"))
  }

  @Test func noChangeAnd304AreNotModified() {
    #expect(
      Self.answer(200, #"{"state":"NO_CHANGE","templateVersion":"9"}"#, headers: ["ETag": "e9"])
        == .notModified(version: 9, etag: "e9"))
    #expect(Self.answer(304, headers: ["ETag": "e9"]) == .notModified(version: nil, etag: "e9"))
    #expect(Self.answer(304) == .notModified(version: nil, etag: nil))
  }

  @Test(arguments: [429, 500, 503, 504])
  func throttlingStatusesAreThrottlingWithTheirRetryAfter(status: Int) {
    #expect(Self.answer(status) == .throttling(status: status, retryAfter: nil))
    #expect(
      Self.answer(status, headers: ["Retry-After": "120"])
        == .throttling(status: status, retryAfter: 120))
  }

  @Test func anUnspecifiedInstanceStateIsAServerErrorThatThrottles() {
    #expect(
      Self.answer(200, #"{"state":"INSTANCE_STATE_UNSPECIFIED"}"#)
        == .throttling(status: 500, retryAfter: nil))
  }

  @Test(arguments: [
    (400, RemoteConfigError.unexpectedStatus(400)),
    (401, .unauthorized(status: 401)),
    (403, .unauthorized(status: 403)),
    (404, .unexpectedStatus(404)),
    (502, .serverError(status: 502, retryAfter: nil)),
    (201, .unexpectedStatus(201)),
  ])
  func otherStatusesAreTypedFailures(status: Int, error: RemoteConfigError) {
    #expect(Self.answer(status, #"{"entries":{"a":"1"}}"#) == .failure(error))
  }

  @Test(arguments: ["", "not json", #"{"entries": {"a": "#, "[1, 2]", #""text""#])
  func a200ThatIsNotAJSONObjectIsMalformed(body: String) {
    #expect(
      Self.answer(200, body)
        == .failure(.malformedJSON("a Firebase fetch answer is a JSON object")))
  }

  @Test func a200CarryingAnErrorObjectIsAServiceError() {
    let answer = Self.answer(
      200, #"{"error":{"code":403,"message":"Permission denied.","status":"PERMISSION_DENIED"}}"#)
    #expect(
      answer
        == .failure(
          .source(
            FirebaseConfigSourceError.serviceError(
              code: 403, status: "PERMISSION_DENIED", message: "Permission denied."))))
    #expect(
      Self.answer(200, #"{"error":{}}"#)
        == .failure(
          .source(FirebaseConfigSourceError.serviceError(code: nil, status: nil, message: nil))))
  }

  @Test func versionsAreNonNegativeIntegersAsTextOrNumbers() {
    #expect(FirebaseFetchAnswer.templateVersion("42") == 42)
    #expect(FirebaseFetchAnswer.templateVersion(42) == 42)
    #expect(FirebaseFetchAnswer.templateVersion("-1") == nil)
    #expect(FirebaseFetchAnswer.templateVersion("4.2") == nil)
    #expect(FirebaseFetchAnswer.templateVersion(true) == nil)
    #expect(FirebaseFetchAnswer.templateVersion(nil) == nil)
  }

  @Test func anETagIsKeptAsSentWhenPrintableAndBounded() {
    #expect(FirebaseFetchAnswer.validETag("etag-1") == "etag-1")  // unquoted, as Firebase's
    #expect(FirebaseFetchAnswer.validETag(#"W/"x""#) == #"W/"x""#)
    #expect(FirebaseFetchAnswer.validETag("") == nil)
    #expect(FirebaseFetchAnswer.validETag("a\u{1}b") == nil)
    #expect(FirebaseFetchAnswer.validETag("é") == nil)
    #expect(FirebaseFetchAnswer.validETag(String(repeating: "e", count: 1025)) == nil)
    #expect(FirebaseFetchAnswer.validETag(nil) == nil)
  }

  @Test func aMalformedAnswerLeavesTheLastGoodValuesAndNoBackoff() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(["welcome_title": "Hello", "max_items": "20"])
    let source = FirebaseConfigSource(
      apiKey: firebase.apiKey, projectID: firebase.projectID, appID: firebase.appID,
      endpoints: .all(at: firebase.baseURL))
    let config = RemoteConfig(source: source)
    try await config.fetchAndActivate()

    firebase.server.inject(.malformedBody(), at: firebase.fetchPath)
    config.isStale = true
    await #expect(
      throws: RemoteConfigError.malformedJSON("a Firebase fetch answer is a JSON object")
    ) {
      try await config.fetchAndActivate()
    }
    #expect(config.lastFetchStatus == .failure)
    #expect(config[.welcomeTitle] == "Hello")
    #expect(config[.maxItems] == 20)
    #expect(source.throttledUntil == nil)
    // The next fetch goes at once and still asks with the last good ETag: not modified.
    #expect(try await config.fetchAndActivate() == false)
    let requests = firebase.fetchRequests
    #expect(requests.count == 3)
    let etag = try #require(requests.last?.header("If-None-Match"))
    #expect(etag != "*" && etag == requests[1].header("If-None-Match"))
    #expect(config[.welcomeTitle] == "Hello")
  }
}
