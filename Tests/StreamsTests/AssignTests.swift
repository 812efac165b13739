import Streams
import Synchronization
import Testing

@Suite struct AssignTests {
  final class Thermometer: @unchecked Sendable {
    // @unchecked: the tests write and read it from one thread at a time.
    var reading = 0.0
  }

  @Test func assignsEachValue() {
    let subject = PassthroughSubject<Double, Never>()
    let thermometer = Thermometer()
    let cancellable = subject.assign(to: \.reading, on: thermometer)
    subject.send(21.5)
    #expect(thermometer.reading == 21.5)
    cancellable.cancel()
    subject.send(30)
    #expect(thermometer.reading == 21.5)
    #expect(subject.subscriberCount == 0)
  }

  @Test func releasesTheObjectOnCompletion() {
    let subject = PassthroughSubject<Double, Never>()
    weak var weakThermometer: Thermometer?
    var cancellable: AnyCancellable?
    do {
      let thermometer = Thermometer()
      weakThermometer = thermometer
      cancellable = subject.assign(to: \.reading, on: thermometer)
    }
    #expect(weakThermometer != nil)
    subject.send(completion: .finished)
    #expect(weakThermometer == nil)
    _ = cancellable
  }
}
