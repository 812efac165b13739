import Foundation
import Streams
import Testing

/// Random chains of operators checked against the same computation on arrays, and random
/// merges checked against a sequential reference.
///
/// Every run draws a fresh seed (or takes `STREAMS_PROPERTY_SEED` from the environment to
/// replay one) and every failure message names it.
@Suite struct PropertyTests {
  static let seed: UInt64 =
    ProcessInfo.processInfo.environment["STREAMS_PROPERTY_SEED"].flatMap { UInt64($0) }
    ?? UInt64.random(in: 0...UInt64.max)

  @Test func randomChainsMatchArrays() {
    var random = SplitMix64(seed: Self.seed)
    for round in 0..<400 {
      let input = (0..<Int.random(in: 0...24, using: &random)).map { _ in
        Int.random(in: -5...20, using: &random)
      }
      let steps = (0..<Int.random(in: 1...6, using: &random)).map { _ in
        ChainStep.random(using: &random)
      }
      let expected = steps.reduce(input) { values, step in step.apply(to: values) }
      let publisher = steps.reduce(input.publisher.eraseToAnyPublisher()) { upstream, step in
        step.apply(to: upstream)
      }
      let oneAtATime = Bool.random(using: &random)
      let recorder = RecordingSubscriber<Int, Never>(
        initialDemand: oneAtATime ? .max(1) : .unlimited,
        demandPerValue: oneAtATime ? .max(1) : .none)
      publisher.subscribe(recorder)
      let chain = steps.map(\.name).joined(separator: ".")
      let context = "seed \(Self.seed), round \(round): \(input) → \(chain)"
      #expect(recorder.values == expected, "\(context)")
      #expect(recorder.completions == [.finished], "\(context)")
      if recorder.values != expected || recorder.completions != [.finished] { return }
    }
  }

  @Test func randomMergesMatchTheSequentialOrder() {
    var random = SplitMix64(seed: Self.seed &+ 1)
    for round in 0..<200 {
      let sourceCount = Int.random(in: 2...5, using: &random)
      let subjects = (0..<sourceCount).map { _ in PassthroughSubject<Int, Never>() }
      let shape = Int.random(in: 0..<3, using: &random)
      let merged: AnyPublisher<Int, Never>
      switch shape {
      case 0: merged = Publishers.MergeMany(subjects).eraseToAnyPublisher()
      case 1:
        merged = subjects.dropFirst().reduce(subjects[0].eraseToAnyPublisher()) {
          $0.merge(with: $1).eraseToAnyPublisher()
        }
      default: merged = subjects.publisher.flatMap { $0 }.eraseToAnyPublisher()
      }
      let recorder = RecordingSubscriber<Int, Never>()
      merged.subscribe(recorder)
      var sent: [Int] = []
      var open = Set(0..<sourceCount)
      for value in 0..<Int.random(in: 0...60, using: &random) {
        let source = Int.random(in: 0..<sourceCount, using: &random)
        if open.contains(source) {
          sent.append(value)
          subjects[source].send(value)
        }
        if Int.random(in: 0..<20, using: &random) == 0 {
          subjects[source].send(completion: .finished)
          open.remove(source)
        }
      }
      let context = "seed \(Self.seed), round \(round), shape \(shape)"
      #expect(recorder.values == sent, "\(context)")
      #expect(recorder.completions.isEmpty == !open.isEmpty, "\(context)")
      for index in open { subjects[index].send(completion: .finished) }
      #expect(recorder.completions == [.finished], "\(context)")
      if recorder.values != sent { return }
    }
  }
}

/// One operator and the same computation on an array.
struct ChainStep {
  let name: String
  let apply: (AnyPublisher<Int, Never>) -> AnyPublisher<Int, Never>
  let reference: ([Int]) -> [Int]

  func apply(to publisher: AnyPublisher<Int, Never>) -> AnyPublisher<Int, Never> {
    apply(publisher)
  }

  func apply(to values: [Int]) -> [Int] { reference(values) }

  static func random(using random: inout SplitMix64) -> ChainStep {
    let k = Int.random(in: -3...6, using: &random)
    let n = Int.random(in: 0...6, using: &random)
    let m = Int.random(in: 2...4, using: &random)
    switch Int.random(in: 0..<22, using: &random) {
    case 0:
      return ChainStep(name: "map(+\(k))", apply: { $0.map { $0 &+ k }.eraseToAnyPublisher() }) {
        $0.map { $0 &+ k }
      }
    case 1:
      return ChainStep(
        name: "filter(%\(m))", apply: { $0.filter { $0 % m == 0 }.eraseToAnyPublisher() }
      ) { $0.filter { $0 % m == 0 } }
    case 2:
      return ChainStep(
        name: "compactMap(/\(m))",
        apply: { $0.compactMap { $0 % m == 0 ? nil : $0 / m }.eraseToAnyPublisher() }
      ) { $0.compactMap { $0 % m == 0 ? nil : $0 / m } }
    case 3:
      return ChainStep(name: "scan(+)", apply: { $0.scan(0) { $0 &+ $1 }.eraseToAnyPublisher() }) {
        var sum = 0
        return $0.map { value in
          sum = sum &+ value
          return sum
        }
      }
    case 4:
      return ChainStep(
        name: "removeDuplicates", apply: { $0.removeDuplicates().eraseToAnyPublisher() }
      ) { values in
        values.enumerated().filter { $0.offset == 0 || values[$0.offset - 1] != $0.element }
          .map(\.element)
      }
    case 5:
      return ChainStep(name: "dropFirst(\(n))", apply: { $0.dropFirst(n).eraseToAnyPublisher() }) {
        Array($0.dropFirst(n))
      }
    case 6:
      return ChainStep(name: "prefix(\(n))", apply: { $0.prefix(n).eraseToAnyPublisher() }) {
        Array($0.prefix(n))
      }
    case 7:
      return ChainStep(
        name: "drop(while: <\(k))", apply: { $0.drop { $0 < k }.eraseToAnyPublisher() }
      ) { Array($0.drop { $0 < k }) }
    case 8:
      return ChainStep(
        name: "prefix(while: <\(k + 8))", apply: { $0.prefix { $0 < k + 8 }.eraseToAnyPublisher() }
      ) { Array($0.prefix { $0 < k + 8 }) }
    case 9:
      return ChainStep(
        name: "output(in: \(n)..<\(n + m))",
        apply: { $0.output(in: n..<(n + m)).eraseToAnyPublisher() }
      ) { Array($0.dropFirst(n).prefix(m)) }
    case 10:
      return ChainStep(
        name: "tryScan(+).replaceError",
        apply: { $0.tryScan(0) { $0 &+ $1 }.replaceError(with: 0).eraseToAnyPublisher() }
      ) {
        var sum = 0
        return $0.map { value in
          sum = sum &+ value
          return sum
        }
      }
    case 11:
      return ChainStep(
        name: "collect(\(m)).flatMap(publisher)",
        apply: { $0.collect(m).flatMap { $0.publisher }.eraseToAnyPublisher() }
      ) { $0 }
    case 12:
      return ChainStep(
        name: "replaceEmpty(\(k))", apply: { $0.replaceEmpty(with: k).eraseToAnyPublisher() }
      ) { $0.isEmpty ? [k] : $0 }
    case 13:
      return ChainStep(
        name: "reduce(+)", apply: { $0.reduce(0) { $0 &+ $1 }.eraseToAnyPublisher() }
      ) {
        [$0.reduce(0, &+)]
      }
    case 14:
      return ChainStep(name: "count", apply: { $0.count().eraseToAnyPublisher() }) { [$0.count] }
    case 15:
      return ChainStep(name: "min", apply: { $0.min().eraseToAnyPublisher() }) {
        $0.min().map { [$0] } ?? []
      }
    case 16:
      return ChainStep(name: "max", apply: { $0.max().eraseToAnyPublisher() }) {
        $0.max().map { [$0] } ?? []
      }
    case 17:
      return ChainStep(name: "last", apply: { $0.last().eraseToAnyPublisher() }) {
        $0.last.map { [$0] } ?? []
      }
    case 18:
      return ChainStep(
        name: "contains(\(k))", apply: { $0.contains(k).map { $0 ? 1 : 0 }.eraseToAnyPublisher() }
      ) { [$0.contains(k) ? 1 : 0] }
    case 19:
      return ChainStep(
        name: "allSatisfy(<\(k + 10))",
        apply: { $0.allSatisfy { $0 < k + 10 }.map { $0 ? 1 : 0 }.eraseToAnyPublisher() }
      ) { [$0.allSatisfy { $0 < k + 10 } ? 1 : 0] }
    case 20:
      return ChainStep(
        name: "tryFilter(%\(m)).tryCompactMap.replaceError",
        apply: {
          $0.tryFilter { $0 % m != 0 }.tryCompactMap { $0 > 10 ? nil : $0 }
            .replaceError(with: 0).eraseToAnyPublisher()
        }
      ) { $0.filter { $0 % m != 0 && $0 <= 10 } }
    default:
      return ChainStep(
        name: "append(\(k)).prepend(\(n))",
        apply: { $0.append(k).prepend(n).eraseToAnyPublisher() }
      ) { [n] + $0 + [k] }
    }
  }
}

/// A small, fast, seeded generator (SplitMix64), so a failing run can be replayed.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
