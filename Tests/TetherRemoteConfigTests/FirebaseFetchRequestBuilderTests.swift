import Foundation
import Testing
import TetherHTTP
import TetherRemoteConfig

/// The fetch request's bytes and headers, and when they are built again: no server.
@Suite struct FirebaseFetchRequestBuilderTests {
  static let app = FirebaseAppInfo(
    appVersion: "2.4.0", appBuild: "418", packageName: "com.example.tool",
    languageCode: "fr-FR", countryCode: "FR", timeZone: "Europe/Paris")

  static func builder() -> FirebaseFetchRequestBuilder {
    FirebaseFetchRequestBuilder(
      root: URL(string: "http://127.0.0.1:8080/")!, apiKey: "AIza key&1",
      projectID: "my project", namespace: "firebase", appID: "1:1234567890:web:abc123",
      app: app, sdkVersion: FirebaseConfigSource.sdkVersion)
  }

  static func fields(_ data: Data?) throws -> [String: JSONValue] {
    guard case .object(let fields) = try JSONValue(parsing: try #require(data)) else {
      throw RemoteConfigError.notAnObject(found: "")
    }
    return fields
  }

  @Test func theBodyCarriesTheSDKsFieldsAndTheSignalsAsStrings() throws {
    var builder = Self.builder()
    let signals = FirebaseCustomSignals(validAmong: ["plan": "pro", "seats": 3, "ratio": 2.5])
    let body = builder.body(fid: "fid-1", authToken: "token-1", signals: signals)
    let fields = try Self.fields(body)
    #expect(fields["app_instance_id"] == "fid-1")
    #expect(fields["app_instance_id_token"] == "token-1")
    #expect(fields["app_id"] == "1:1234567890:web:abc123")
    #expect(fields["sdk_version"] == .string(FirebaseConfigSource.sdkVersion))
    #expect(fields["custom_signals"] == ["plan": "pro", "seats": "3", "ratio": "2.5"])
    #expect(fields["app_version"] == "2.4.0")
    #expect(fields["app_build"] == "418")
    #expect(fields["package_name"] == "com.example.tool")
    #expect(fields["language_code"] == "fr-FR")
    #expect(fields["country_code"] == "FR")
    #expect(fields["time_zone"] == "Europe/Paris")
    #expect(fields["platform_version"] == nil)  // nil fields are not sent
  }

  @Test func theRequestIsAPostWithTheSDKsHeadersAndEscapedURL() {
    var builder = Self.builder()
    let request = builder.request(
      fid: "fid-1", authToken: "token-1", signals: FirebaseCustomSignals(validAmong: [:]),
      etag: "etag-7", type: "BASE/1", timeout: 10)
    #expect(request.method == .post)
    #expect(
      request.url.absoluteString
        == "http://127.0.0.1:8080/v1/projects/my%20project/namespaces/firebase:fetch"
        + "?key=AIza%20key%261")
    #expect(
      request.headers == [
        "Content-Type": "application/json",
        "If-None-Match": "etag-7",
        "X-Goog-Firebase-Installations-Auth": "token-1",
        "X-Firebase-RC-Fetch-Type": "BASE/1",
      ])
    #expect(request.timeout == .seconds(10))
  }

  @Test func withoutAnETagTheRequestAsksForAnyTemplate() {
    var builder = Self.builder()
    let request = builder.request(
      fid: "fid-1", authToken: "token-1", signals: FirebaseCustomSignals(validAmong: [:]),
      etag: nil, type: "BASE/1", timeout: 10)
    #expect(request.header("If-None-Match") == "*")
  }

  @Test(arguments: [
    (0.0, Duration.milliseconds(1)), (1e12, .seconds(86_400)), (2.5, .seconds(2.5)),
  ])
  func theTimeoutIsBounded(seconds: TimeInterval, expected: Duration) {
    var builder = Self.builder()
    let request = builder.request(
      fid: "f", authToken: "t", signals: FirebaseCustomSignals(validAmong: [:]), etag: nil,
      type: "BASE/1", timeout: seconds)
    #expect(request.timeout == expected)
  }

  @Test func theFetchTypeNamesARealtimeFetchAndTheAttempt() {
    #expect(FirebaseFetchRequestBuilder.fetchType(realtime: false, attempt: 1) == "BASE/1")
    #expect(FirebaseFetchRequestBuilder.fetchType(realtime: true, attempt: 3) == "REALTIME/3")
  }

  @Test func aPollOfAnUnchangedInstallationRepeatsTheRequestWithoutBuildingIt() {
    var builder = Self.builder()
    let signals = FirebaseCustomSignals(validAmong: ["plan": "pro"])
    let first = builder.request(
      fid: "fid-1", authToken: "token-1", signals: signals, etag: "e1", type: "BASE/1",
      timeout: 60)
    for _ in 0..<5 {
      let again = builder.request(
        fid: "fid-1", authToken: "token-1", signals: signals, etag: "e1", type: "BASE/1",
        timeout: 60)
      #expect(again == first)
    }
    #expect(builder.bodiesEncoded == 1)
    #expect(builder.requestsBuilt == 1)
  }

  @Test func aNewTokenOrInstallationEncodesTheBodyAgain() throws {
    var builder = Self.builder()
    let signals = FirebaseCustomSignals(validAmong: [:])
    _ = builder.request(
      fid: "fid-1", authToken: "token-1", signals: signals, etag: "e1", type: "BASE/1",
      timeout: 60)
    let refreshed = builder.request(
      fid: "fid-1", authToken: "token-2", signals: signals, etag: "e1", type: "BASE/1",
      timeout: 60)
    #expect(builder.bodiesEncoded == 2)
    #expect(refreshed.header("X-Goog-Firebase-Installations-Auth") == "token-2")
    #expect(try Self.fields(refreshed.body)["app_instance_id_token"] == "token-2")
    let registered = builder.request(
      fid: "fid-2", authToken: "token-2", signals: signals, etag: "e1", type: "BASE/1",
      timeout: 60)
    #expect(builder.bodiesEncoded == 3)
    #expect(try Self.fields(registered.body)["app_instance_id"] == "fid-2")
  }

  @Test func changedSignalsEncodeTheBodyAgain() throws {
    var builder = Self.builder()
    var signals = FirebaseCustomSignals(validAmong: ["plan": "free"])
    _ = builder.body(fid: "fid-1", authToken: "token-1", signals: signals)
    // The same values again are no change: nothing is encoded.
    #expect(try signals.merge(["plan": "free"]) == false)
    _ = builder.body(fid: "fid-1", authToken: "token-1", signals: signals)
    #expect(builder.bodiesEncoded == 1)
    #expect(try signals.merge(["plan": "pro"]))
    let body = builder.body(fid: "fid-1", authToken: "token-1", signals: signals)
    #expect(builder.bodiesEncoded == 2)
    #expect(try Self.fields(body)["custom_signals"] == ["plan": "pro"])
  }

  @Test func anotherETagTypeOrTimeoutBuildsTheRequestAgainButReusesTheBody() {
    var builder = Self.builder()
    let signals = FirebaseCustomSignals(validAmong: [:])
    func request(etag: String?, type: String, timeout: TimeInterval) -> HTTPRequest {
      builder.request(
        fid: "fid-1", authToken: "token-1", signals: signals, etag: etag, type: type,
        timeout: timeout)
    }
    let first = request(etag: "e1", type: "BASE/1", timeout: 60)
    #expect(request(etag: "e2", type: "BASE/1", timeout: 60).header("If-None-Match") == "e2")
    #expect(request(etag: nil, type: "BASE/1", timeout: 60).header("If-None-Match") == "*")
    #expect(
      request(etag: nil, type: "REALTIME/1", timeout: 60).header("X-Firebase-RC-Fetch-Type")
        == "REALTIME/1")
    #expect(request(etag: nil, type: "REALTIME/1", timeout: 5).timeout == .seconds(5))
    #expect(builder.requestsBuilt == 5)
    #expect(builder.bodiesEncoded == 1)
    #expect(request(etag: "e1", type: "BASE/1", timeout: 60).body == first.body)
  }
}
