import Streams
import Testing

@Suite struct ValuesTests {
  @Test func loopGetsEveryValueInOrder() async {
    let subject = PassthroughSubject<Int, Never>()
    let values = subject.values
    (0..<1_000).forEach(subject.send)
    subject.send(completion: .finished)
    var received: [Int] = []
    for await value in values { received.append(value) }
    #expect(received == Array(0..<1_000))
  }

  @Test func breakingOutCancelsUpstreamAtOnce() async {
    let subject = CurrentValueSubject<Int, Never>(0)
    for await value in subject.values where value == 0 {
      #expect(subject.subscriberCount == 1)
      break
    }
    #expect(subject.subscriberCount == 0)
  }

  @Test func cancellingTheTaskCancelsUpstreamAtOnce() async {
    let subject = PassthroughSubject<Int, Never>()
    let values = subject.values
    #expect(subject.subscriberCount == 1)
    let task = Task {
      var count = 0
      for await _ in values { count += 1 }
      return count
    }
    subject.send(1)
    task.cancel()
    _ = await task.value
    #expect(subject.subscriberCount == 0)
  }

  @Test func failureIsThrownOnceAfterTheValues() async {
    let subject = PassthroughSubject<Int, ContractError>()
    let values = subject.values
    subject.send(1)
    subject.send(2)
    subject.send(completion: .failure(.boom))
    var received: [Int] = []
    var errors: [ContractError] = []
    do {
      for try await value in values { received.append(value) }
    } catch {
      errors.append(error as! ContractError)
    }
    #expect(received == [1, 2])
    #expect(errors == [.boom])
  }

  @Test func twoLoopsOnOnePublisherBothSeeEveryValue() async {
    let subject = PassthroughSubject<Int, Never>()
    let first = subject.values
    let second = subject.values
    (1...3).forEach(subject.send)
    subject.send(completion: .finished)
    async let a = first.reduce(into: [Int]()) { $0.append($1) }
    async let b = second.reduce(into: [Int]()) { $0.append($1) }
    #expect(await a == [1, 2, 3])
    #expect(await b == [1, 2, 3])
  }

  @Test func bufferingNewestConflatesAndKeepsTheLast() async {
    let subject = PassthroughSubject<Int, Never>()
    let values = subject.values(bufferingPolicy: .bufferingNewest(1))
    (1...100).forEach(subject.send)
    subject.send(completion: .finished)
    var received: [Int] = []
    for await value in values { received.append(value) }
    #expect(received == [100])
  }

  @Test func bufferingOldestKeepsTheFirst() async {
    let subject = PassthroughSubject<Int, Never>()
    let values = subject.values(bufferingPolicy: .bufferingOldest(2))
    (1...10).forEach(subject.send)
    subject.send(completion: .finished)
    var received: [Int] = []
    for await value in values { received.append(value) }
    #expect(received == [1, 2])
  }

  @Test func droppedStreamCancelsItsSubscription() {
    let subject = PassthroughSubject<Int, Never>()
    do {
      let values = subject.values
      #expect(subject.subscriberCount == 1)
      _ = values
    }
    #expect(subject.subscriberCount == 0)
  }
}
