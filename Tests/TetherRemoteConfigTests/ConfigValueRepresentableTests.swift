import Foundation
import Testing
import TetherRemoteConfig

/// Reads `json` (a JSON value as the source sent it) as `T`.
private func read<T: ConfigValueRepresentable>(_ json: String, as type: T.Type) throws -> T {
  let raw = try JSONValue(parsing: Data(json.utf8))
  return try T(configValue: ConfigValue(raw: raw, source: .remote))
}

@Suite struct ConfigValueRepresentableTests {
  @Test(
    arguments: [
      (#""hello""#, "hello"), (#""""#, ""), ("20", "20"), ("true", "true"), ("0.5", "0.5"),
      ("null", nil), ("[1]", nil), (#"{"a":1}"#, nil),
    ] as [(String, String?)])
  func string(json: String, expected: String?) {
    #expect((try? read(json, as: String.self)) == expected)
  }

  @Test(
    arguments: [
      ("20", 20), (#""20""#, 20), (#"" 20 ""#, 20), ("-3", -3), ("20.0", 20), (#""1e2""#, 100),
      ("20.5", nil), (#""twenty""#, nil), ("true", nil), ("null", nil), ("[20]", nil),
    ] as [(String, Int?)])
  func int(json: String, expected: Int?) {
    #expect((try? read(json, as: Int.self)) == expected)
  }

  @Test(
    arguments: [
      ("0.25", 0.25), (#""0.25""#, 0.25), ("3", 3), (#""-1e3""#, -1000), (#""x""#, nil),
      ("false", nil), ("{}", nil),
    ] as [(String, Double?)])
  func double(json: String, expected: Double?) {
    #expect((try? read(json, as: Double.self)) == expected)
    #expect((try? read(json, as: Float.self)) == expected.map(Float.init))
  }

  @Test(
    arguments: [
      ("true", true), ("false", false), ("1", true), ("0", false),
      (#""1""#, true), (#""true""#, true), (#""t""#, true), (#""yes""#, true), (#""y""#, true),
      (#""on""#, true), (#""TRUE""#, true), (#""Yes""#, true), (#""ON""#, true),
      (#""0""#, false), (#""false""#, false), (#""f""#, false), (#""no""#, false),
      (#""n""#, false), (#""off""#, false), (#""""#, false), (#""False""#, false),
      (#""NO""#, false), (#""Off""#, false),
      (#""2""#, nil), (#""maybe""#, nil), (#""truthy""#, nil), ("2", nil), ("null", nil),
      ("[true]", nil),
    ] as [(String, Bool?)])
  func boolTruthTable(json: String, expected: Bool?) {
    #expect((try? read(json, as: Bool.self)) == expected)
  }

  @Test func dataIsBase64() throws {
    #expect(try read(#""aGVsbG8=""#, as: Data.self) == Data("hello".utf8))
    #expect(throws: ConfigDecodingError.self) { try read(#""not base64!""#, as: Data.self) }
    #expect(throws: ConfigDecodingError.self) { try read("12", as: Data.self) }
  }

  @Test func urlNeedsAScheme() throws {
    #expect(try read(#""https://example.com/a?b=1""#, as: URL.self).host == "example.com")
    #expect(throws: ConfigDecodingError.self) { try read(#""""#, as: URL.self) }
    #expect(throws: ConfigDecodingError.self) { try read(#""just words""#, as: URL.self) }
  }

  @Test func dateIsISO8601() throws {
    let date = try read(#""2026-03-01T09:30:00Z""#, as: Date.self)
    #expect(date == Date(timeIntervalSince1970: 1_772_357_400))
    let offset = try read(#""2026-03-01T10:30:00.250+01:00""#, as: Date.self)
    #expect(abs(offset.timeIntervalSince1970 - 1_772_357_400.25) < 0.001)
    #expect(throws: ConfigDecodingError.self) { try read(#""March 1st""#, as: Date.self) }
    #expect(throws: ConfigDecodingError.self) { try read("1772357400", as: Date.self) }
  }

  @Test(
    arguments: [
      (##""#F0A""##, HexColor(red: 0xFF, green: 0x00, blue: 0xAA)),
      (##""#1a2B3c""##, HexColor(red: 0x1A, green: 0x2B, blue: 0x3C)),
      (##""#11223380""##, HexColor(red: 0x11, green: 0x22, blue: 0x33, alpha: 0x80)),
      (#""112233""#, nil), (##""#12""##, nil), (##""#12345""##, nil), (##""#GGGGGG""##, nil),
      ("255", nil),
    ] as [(String, HexColor?)])
  func hexColor(json: String, expected: HexColor?) {
    #expect((try? read(json, as: HexColor.self)) == expected)
  }

  @Test func hexColorWritesItsShortestForm() {
    #expect(HexColor(red: 1, green: 2, blue: 3).description == "#010203")
    #expect(HexColor(red: 1, green: 2, blue: 3, alpha: 4).description == "#01020304")
  }

  @Test func enumsReadTheirRawValue() throws {
    #expect(try read(#""dark""#, as: Theme.self) == .dark)
    #expect(try read("2", as: Level.self) == .high)
    #expect(try read(#""2""#, as: Level.self) == .high)
    #expect(throws: ConfigDecodingError.self) { try read(#""blue""#, as: Theme.self) }
    #expect(throws: ConfigDecodingError.self) { try read("3", as: Level.self) }
  }

  @Test func codableFromJSONAndFromAJSONString() throws {
    let expected = Banner(title: "Sale", priority: 2)
    #expect(try read(#"{"title": "Sale", "priority": 2}"#, as: Banner.self) == expected)
    #expect(try read(#""{\"title\": \"Sale\", \"priority\": 2}""#, as: Banner.self) == expected)
    #expect(throws: ConfigDecodingError.self) { try read(#"{"title": "Sale"}"#, as: Banner.self) }
    #expect(throws: ConfigDecodingError.self) { try read(#""not json""#, as: Banner.self) }
  }

  @Test func arraysOfEveryKind() throws {
    #expect(try read(#"["a", "b"]"#, as: [String].self) == ["a", "b"])
    #expect(try read(#""[\"a\", \"b\"]""#, as: [String].self) == ["a", "b"])
    #expect(try read(#"[1, "2", 3.0]"#, as: [Int].self) == [1, 2, 3])
    #expect(try read(#"[true, "no", "on"]"#, as: [Bool].self) == [true, false, true])
    #expect(
      try read(##"["#fff"]"##, as: [HexColor].self) == [HexColor(red: 255, green: 255, blue: 255)])
    #expect(
      try read(#"["2026-03-01T09:30:00Z"]"#, as: [Date].self)
        == [Date(timeIntervalSince1970: 1_772_357_400)])
    #expect(try read(#"["dark", "light"]"#, as: [Theme].self) == [.dark, .light])
    #expect(
      try read(#"[{"title": "A", "priority": 1}]"#, as: [Banner].self)
        == [Banner(title: "A", priority: 1)])
    #expect(try read(#"[1, null]"#, as: [Int?].self) == [1, nil])
    #expect(throws: ConfigDecodingError.self) { try read(#"[1, "x"]"#, as: [Int].self) }
    #expect(throws: ConfigDecodingError.self) { try read(#""a,b""#, as: [String].self) }
  }

  @Test func dictionaries() throws {
    #expect(try read(#"{"a": 1, "b": "2"}"#, as: [String: Int].self) == ["a": 1, "b": 2])
    #expect(try read(#""{\"a\": [1]}""#, as: [String: [Int]].self) == ["a": [1]])
    #expect(throws: ConfigDecodingError.self) { try read("[1]", as: [String: Int].self) }
  }

  @Test func optionals() throws {
    #expect(try read("null", as: Int?.self) == nil)
    #expect(try read(#""7""#, as: Int?.self) == 7)
    #expect(throws: ConfigDecodingError.self) { try read(#""seven""#, as: Int?.self) }
  }

  @Test func valuesRoundTripThroughTheirJSONForm() throws {
    func roundTrip<T: ConfigValueRepresentable & Equatable>(_ value: T) throws -> Bool {
      let json = try #require(value.configJSON)
      return try T(configValue: ConfigValue(raw: json, source: .default)) == value
    }
    #expect(try roundTrip("text"))
    #expect(try roundTrip(42))
    #expect(try roundTrip(true))
    #expect(try roundTrip(Data([0, 1, 2])))
    #expect(try roundTrip(URL(string: "https://example.com")!))
    #expect(try roundTrip(Date(timeIntervalSince1970: 1_772_357_400)))
    #expect(try roundTrip(HexColor(red: 1, green: 2, blue: 3, alpha: 4)))
    #expect(try roundTrip(Theme.dark))
    #expect(try roundTrip(Banner(title: "x", priority: 1)))
    #expect(try roundTrip(["a": [1, 2]]))
    #expect(try roundTrip(Optional<Int>.none))
  }

  @Test func decodingErrorsSayWhatWasWrong() {
    #expect {
      try read(#""maybe""#, as: Bool.self)
    } throws: { error in
      let error = error as? ConfigDecodingError
      return error?.type == "Bool" && error?.value == .string("maybe") && error?.source == .remote
    }
  }
}
