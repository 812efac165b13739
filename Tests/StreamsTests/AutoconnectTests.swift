import Streams
import Testing

@Suite struct AutoconnectTests {
  /// A connectable publisher as a user would write one: a subject that counts connections.
  final class CountingConnectable: ConnectablePublisher, Sendable {
    typealias Output = Int
    typealias Failure = ContractError

    let subject = PassthroughSubject<Int, ContractError>()
    let connects = Counter()
    let disconnects = Counter()

    func receive<S: Subscriber>(subscriber: S) where S.Input == Int, S.Failure == ContractError {
      subject.subscribe(subscriber)
    }

    func connect() -> any Cancellable {
      connects.increment()
      let disconnects = disconnects
      return AnyCancellable { disconnects.increment() }
    }
  }

  @Test func connectsWithTheFirstSubscriberAndDisconnectsAfterTheLast() {
    let upstream = CountingConnectable()
    let shared = upstream.autoconnect()
    let first = RecordingSubscriber<Int, ContractError>()
    let second = RecordingSubscriber<Int, ContractError>()
    shared.subscribe(first)
    shared.subscribe(second)
    #expect(upstream.connects.value == 1)
    upstream.subject.send(1)
    #expect(first.values == [1])
    #expect(second.values == [1])
    first.cancel()
    #expect(upstream.disconnects.value == 0)
    second.cancel()
    #expect(upstream.disconnects.value == 1)
    let third = RecordingSubscriber<Int, ContractError>()
    shared.subscribe(third)
    #expect(upstream.connects.value == 2)
    third.cancel()
    #expect(upstream.disconnects.value == 2)
  }

  @Test func keepsThePublisherContract() {
    checkContract {
      let upstream = CountingConnectable()
      return ContractRig(
        publisher: upstream.autoconnect(), send: { upstream.subject.send($0) },
        finish: { upstream.subject.send(completion: .finished) },
        fail: { upstream.subject.send(completion: .failure(.boom)) })
    }
  }
}
