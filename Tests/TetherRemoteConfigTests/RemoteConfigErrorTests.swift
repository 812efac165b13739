import Foundation
import TestSupport
import Testing
import TetherRemoteConfig

/// Remote config errors read well in `localizedDescription` and compare equal in tests.
@Suite struct RemoteConfigErrorTests {
  @Test func aRefusedFetchThrowsAnEquatableErrorThatReadsWell() async throws {
    let fixture = try await Fixture("{}")
    fixture.server.inject(.status(401), at: Fixture.path)
    await #expect(throws: RemoteConfigError.unauthorized(status: 401)) {
      try await fixture.config.fetch()
    }
    let error: any Error = try #require(fixture.config.lastError)
    #expect(error.localizedDescription == "\(error)")
    #expect(error.localizedDescription.contains("401"))
    #expect(RemoteConfigError.unauthorized(status: 401) != .unauthorized(status: 403))
  }

  @Test func aDecodingErrorNamesTheKeyInLocalizedDescription() {
    let error: any Error = ConfigDecodingError(
      Int.self, value: ConfigValue(raw: .string("many"), source: .remote), reason: "not a number",
      key: "max_items")
    #expect(error.localizedDescription.contains("config key 'max_items'"))
    #expect(error.localizedDescription == "\(error)")
  }
}
