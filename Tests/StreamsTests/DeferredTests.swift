import Streams
import Synchronization
import Testing

@Suite struct DeferredTests {
  @Test func keepsThePublisherContract() {
    checkContract { ContractRig(publisher: Deferred { (0..<10).publisher }) }
  }

  @Test func createsAPublisherPerSubscriber() {
    let created = Counter()
    let deferred = Deferred {
      created.increment()
      return Just(created.value)
    }
    #expect(created.value == 0)
    let first = RecordingSubscriber<Int, Never>()
    let second = RecordingSubscriber<Int, Never>()
    deferred.subscribe(first)
    deferred.subscribe(second)
    #expect(first.values == [1])
    #expect(second.values == [2])
  }
}
