import Foundation
import TestSupport
import Testing

@Suite struct HTTPDateTests {
  @Test func formatsAndParsesIMFFixdate() {
    let date = Date(timeIntervalSince1970: 784_111_777)
    #expect(HTTPDate.string(from: date) == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(HTTPDate.date(from: "Sun, 06 Nov 1994 08:49:37 GMT") == date)
  }

  @Test func dropsFractionsOfASecond() {
    let date = Date(timeIntervalSince1970: 1_700_000_000.75)
    let text = HTTPDate.string(from: date)
    #expect(HTTPDate.date(from: text) == Date(timeIntervalSince1970: 1_700_000_000))
  }

  @Test(arguments: [
    "", "yesterday", "Sun, 06 Nov 1994 08:49:37 CET", "Sun, 06 Foo 1994 08:49:37 GMT",
  ])
  func rejectsOtherText(_ text: String) {
    #expect(HTTPDate.date(from: text) == nil)
  }
}
