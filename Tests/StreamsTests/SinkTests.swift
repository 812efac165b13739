import Streams
import Synchronization
import Testing

@Suite struct SinkTests {
  @Test func receivesValuesAndCompletion() {
    let subject = PassthroughSubject<Int, ContractError>()
    let log = Mutex<[String]>([])
    let cancellable = subject.sink(
      receiveCompletion: { completion in log.withLock { $0.append("\(completion)") } },
      receiveValue: { value in log.withLock { $0.append("\(value)") } })
    subject.send(1)
    subject.send(completion: .failure(.boom))
    subject.send(2)
    #expect(log.withLock { $0 } == ["1", "failure(StreamsTests.ContractError.boom)"])
    withExtendedLifetime(cancellable) {}
  }

  @Test func releasingTheCancellableCancels() {
    let subject = PassthroughSubject<Int, Never>()
    let count = Atomic<Int>(0)
    var cancellable: AnyCancellable? = subject.sink { _ in count.add(1, ordering: .relaxed) }
    subject.send(1)
    _ = cancellable
    cancellable = nil
    subject.send(2)
    #expect(count.load(ordering: .relaxed) == 1)
    #expect(subject.subscriberCount == 0)
  }

  @Test func storesInSetsAndArrays() {
    let subject = PassthroughSubject<Int, Never>()
    var set = Set<AnyCancellable>()
    var array: [AnyCancellable] = []
    subject.sink { _ in }.store(in: &set)
    subject.sink { _ in }.store(in: &array)
    #expect(subject.subscriberCount == 2)
    set.removeAll()
    array.removeAll()
    #expect(subject.subscriberCount == 0)
  }
}
