import Foundation
import Testing
import TetherRemoteConfig

/// JSONValue is written with Swift literals, and they mean what the JSON text means.
@Suite struct JSONValueLiteralTests {
  @Test func everyLiteralMatchesTheParsedJSON() throws {
    let literal: JSONValue = [
      "title": "Welcome", "limit": 20, "ratio": 0.5, "enabled": true, "missing": nil,
      "sizes": [1, 2.5, "three", false],
    ]
    let parsed = try JSONValue(
      parsing: Data(
        #"{"title":"Welcome","limit":20,"ratio":0.5,"enabled":true,"missing":null,"sizes":[1,2.5,"three",false]}"#
          .utf8))
    #expect(literal == parsed)
  }

  @Test func literalsBuildConfigValues() {
    #expect(ConfigValue(raw: 20, source: .remote).numberValue == 20)
    #expect(ConfigValue(raw: "on", source: .remote).boolValue == true)
    #expect(ConfigValue(raw: nil, source: .static).raw == .null)
    let duplicated: JSONValue = ["a": 1, "a": 2]
    #expect(duplicated == .object(["a": 2]))
  }
}
