import Foundation
import Testing
import TetherRemoteConfig

@Suite struct JSONValueTests {
  @Test func parsesEveryKindKeepingIntegersExact() throws {
    let value = try JSONValue(
      parsing: Data(
        #"{"i": 9007199254740993, "d": 0.5, "e": 1e3, "s": "a\"\u00e9\ud83d\ude00\n", "b": [true, false, null]}"#
          .utf8))
    #expect(
      value
        == .object([
          "i": .int(9_007_199_254_740_993), "d": .double(0.5), "e": .double(1000),
          "s": .string("a\"é😀\n"), "b": .array([.bool(true), .bool(false), .null]),
        ]))
  }

  @Test(arguments: [
    #"{"a": }"#, #"{"a": 1"#, #"{"a" 1}"#, "[1,]", "01", "tru", #""\x""#, "{} {}", "", "-",
    #""unterminated"#, #"{"a": 1,}"#,
  ])
  func rejectsMalformedDocuments(text: String) {
    #expect(throws: (any Error).self) { try JSONValue(parsing: Data(text.utf8)) }
  }

  @Test func writesWhatItReads() throws {
    let text = #"{"a":[1,2.5,"x\"y"],"b":{"c":null,"d":true}}"#
    let value = try JSONValue(parsing: Data(text.utf8))
    #expect(value.jsonText == text)
    #expect(try JSONValue(parsing: value.jsonData()) == value)
  }

  @Test func convertsFoundationValues() {
    let value = JSONValue(
      foundationValue: [
        "s": "x", "i": 3, "d": 2.5, "b": true, "n": NSNull(), "a": [1, "two"],
        "data": Data("hi".utf8),
      ] as [String: Any])
    #expect(
      value
        == .object([
          "s": .string("x"), "i": .int(3), "d": .double(2.5), "b": .bool(true), "n": .null,
          "a": .array([.int(1), .string("two")]), "data": .string("aGk="),
        ]))
    #expect(JSONValue(foundationValue: NSObject()) == nil)
  }
}
