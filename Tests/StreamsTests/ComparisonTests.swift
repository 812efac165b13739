import Streams
import Testing

@Suite struct ComparisonTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.min() }
    checkOperatorContract { $0.max() }
    checkOperatorContract { $0.tryMax { $0 < $1 } }
  }

  @Test func publishesTheSmallestAndLargestElements() {
    let minimum = RecordingSubscriber<Int, Never>()
    let maximum = RecordingSubscriber<Int, Never>()
    [3, 1, 4, 1, 5].publisher.min().subscribe(minimum)
    [3, 1, 4, 1, 5].publisher.max().subscribe(maximum)
    #expect(minimum.values == [1])
    #expect(maximum.values == [5])
  }

  @Test func orderingClosuresPickTheFirstMinimumAndTheLastMaximum() {
    let pairs = [(1, "a"), (0, "b"), (0, "c"), (2, "d"), (2, "e")]
    let minimum = RecordingSubscriber<String, Never>()
    let maximum = RecordingSubscriber<String, Never>()
    pairs.publisher.min { $0.0 < $1.0 }.map(\.1).subscribe(minimum)
    pairs.publisher.max { $0.0 < $1.0 }.map(\.1).subscribe(maximum)
    #expect(minimum.values == ["b"])
    #expect(maximum.values == ["e"])
  }

  @Test func comparableAndThrowingOrderingsPickTheFirstMinimumAndTheLastMaximum() {
    let keys = [Ranked(1, "a"), Ranked(0, "b"), Ranked(0, "c"), Ranked(2, "d"), Ranked(2, "e")]
    let minimum = RecordingSubscriber<String, Never>()
    let maximum = RecordingSubscriber<String, Never>()
    keys.publisher.min().map(\.name).subscribe(minimum)
    keys.publisher.max().map(\.name).subscribe(maximum)
    #expect(minimum.values == ["b"])
    #expect(maximum.values == ["e"])

    let tryMinimum = RecordingSubscriber<String, any Error>()
    let tryMaximum = RecordingSubscriber<String, any Error>()
    keys.publisher.tryMin { $0.rank < $1.rank }.map(\.name).subscribe(tryMinimum)
    keys.publisher.tryMax { $0.rank < $1.rank }.map(\.name).subscribe(tryMaximum)
    #expect(tryMinimum.values == ["b"])
    #expect(tryMaximum.values == ["e"])
  }

  @Test func anEmptyStreamFinishesWithoutAValue() {
    let recorder = RecordingSubscriber<Int, Never>()
    Empty<Int, Never>().min().subscribe(recorder)
    #expect(recorder.events == [.subscription, .completion(.finished)])
  }

  @Test func tryMinFailsWhenTheOrderingThrows() {
    let recorder = RecordingSubscriber<Int, any Error>()
    [1, 2].publisher.tryMin { _, _ in throw ContractError.boom }.subscribe(recorder)
    #expect(recorder.values == [])
    #expect(recorder.completions.count == 1)
  }
}

/// A value ordered by `rank` alone, so that equal ranks tell which of them an operator kept.
private struct Ranked: Comparable, Sendable {
  let rank: Int
  let name: String

  init(_ rank: Int, _ name: String) {
    self.rank = rank
    self.name = name
  }

  static func < (lhs: Ranked, rhs: Ranked) -> Bool { lhs.rank < rhs.rank }
  static func == (lhs: Ranked, rhs: Ranked) -> Bool { lhs.rank == rhs.rank }
}
