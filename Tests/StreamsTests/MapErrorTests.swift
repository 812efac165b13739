import Streams
import Testing

@Suite struct MapErrorTests {
  enum Wrapped: Error, Equatable { case wrapped(ContractError) }

  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.mapError { Wrapped.wrapped($0) } }
  }

  @Test func convertsTheFailureAndPassesElementsThrough() {
    let subject = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Int, Wrapped>()
    subject.mapError { Wrapped.wrapped($0) }.subscribe(recorder)
    subject.send(1)
    subject.send(completion: .failure(.boom))
    #expect(
      recorder.events == [.subscription, .value(1), .completion(.failure(.wrapped(.boom)))])
  }
}
