import Foundation
import Testing
import TetherRemoteConfig

@Suite struct ConfigValueTests {
  @Test func viewsOfANumber() {
    for raw in [JSONValue.int(20), .string("20")] {
      let value = ConfigValue(raw: raw, source: .remote)
      #expect(value.stringValue == "20")
      #expect(value.numberValue == 20)
      #expect(value.boolValue == nil)
      #expect(value.dataValue == Data("20".utf8))
      #expect(value.source == .remote)
    }
  }

  @Test func viewsOfABoolean() {
    #expect(ConfigValue(raw: .bool(true), source: .default).boolValue == true)
    #expect(ConfigValue(raw: .string("off"), source: .default).boolValue == false)
    #expect(ConfigValue(raw: .bool(true), source: .default).stringValue == "true")
  }

  @Test func jsonViewParsesADocumentInAString() {
    let object = JSONValue.object(["a": .int(1)])
    #expect(ConfigValue(raw: object, source: .remote).jsonValue == object)
    #expect(ConfigValue(raw: .string(#"{"a": 1}"#), source: .remote).jsonValue == object)
    #expect(ConfigValue(raw: .string("plain text"), source: .remote).jsonValue == nil)
    #expect(ConfigValue(raw: object, source: .remote).stringValue == #"{"a":1}"#)
  }
}
