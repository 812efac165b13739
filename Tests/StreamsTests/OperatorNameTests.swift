import Foundation
import Streams
import Testing

/// Operators that share one implementation still describe themselves by the name the user
/// wrote, in `description`, `print()` and `String(describing:)`.
@Suite struct OperatorNameTests {
  @Test func elementOperatorsNameTheOperatorNotTheirSharedCore() {
    let subject = PassthroughSubject<Int?, ContractError>()
    #expect("\(subject.map { $0 })" == "Map")
    #expect("\(subject.filter { $0 != nil })" == "Filter")
    #expect("\(subject.compactMap { $0 })" == "CompactMap")
    #expect("\(subject.dropFirst())" == "Drop")
    #expect("\(subject.scan(0) { $0 + ($1 ?? 0) })" == "Scan")
    #expect("\(subject.mapError { _ in URLError(.badURL) })" == "MapError")
    #expect("\(Just(1).setFailureType(to: ContractError.self))" == "SetFailureType")
  }

  @Test func decodeAndEncodeNameThemselves() {
    struct Item: Codable, Sendable { let id: Int }
    let data = PassthroughSubject<Data, Never>()
    #expect("\(data.decode(type: Item.self, decoder: JSONDecoder()))" == "Decode")
    #expect("\(Just(Item(id: 1)).encode(encoder: JSONEncoder()))" == "Encode")
  }
}
