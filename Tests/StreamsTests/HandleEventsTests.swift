import Streams
import Synchronization
import Testing

@Suite struct HandleEventsTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.handleEvents(receiveOutput: { _ in }) }
  }

  /// With a cancel or request handler the stage stands between its subscriber and upstream
  /// (without one it hands the upstream subscription straight through): both keep the
  /// contract.
  @Test func keepsThePublisherContractWhenObservingCancelAndRequest() {
    checkOperatorContract {
      $0.handleEvents(receiveCancel: {}, receiveRequest: { _ in })
    }
  }

  @Test func reportsEveryEventInOrder() {
    let log = Mutex<[String]>([])
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
    subject.handleEvents(
      receiveSubscription: { _ in log.withLock { $0.append("subscription") } },
      receiveOutput: { value in log.withLock { $0.append("output \(value)") } },
      receiveCompletion: { _ in log.withLock { $0.append("completion") } },
      receiveCancel: { log.withLock { $0.append("cancel") } },
      receiveRequest: { demand in log.withLock { $0.append("request \(demand)") } }
    ).subscribe(recorder)
    subject.send(1)
    recorder.cancel()
    recorder.cancel()
    subject.send(2)
    #expect(
      log.withLock { $0 } == ["subscription", "request max(2)", "output 1", "cancel"])
  }
}
