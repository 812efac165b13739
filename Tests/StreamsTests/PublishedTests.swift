import Dispatch
import Streams
import Synchronization
import Testing

/// A Combine-style model: `@Published` properties, `objectWillChange` synthesized.
@MainActor private final class Profile: ObservableObject {
  @Published var name = "Ada"
  @Published var age = 36
}

/// A subclass adds its own `@Published` property; one `objectWillChange` covers all three.
private final class Employee: ObservableObjectBase {
  @Published var team = "Streams"
}

private class ObservableObjectBase: ObservableObject {
  @Published var badge = 1
}

/// No `@Published` property: `objectWillChange` is the author's own.
private final class Manual: ObservableObject {
  let objectWillChange = ObservableObjectPublisher()
}

@MainActor private final class Clock: ObservableObject {
  @Published var now = 0
  init(ticks: PassthroughSubject<Int, Never>) { ticks.assign(to: &$now) }
}

@Suite struct PublishedTests {
  @MainActor @Test func keepsThePublisherContract() {
    checkContract {
      // `$age` never completes; a rig that "finishes" stops setting the property, so the
      // checks after a completion hold vacuously and the others apply in full.
      let profile = Profile()
      var ended = false
      return ContractRig(
        publisher: profile.$age, send: { if !ended { profile.age = $0 } },
        finish: { ended = true }, fail: { ended = true })
    }
  }

  @MainActor @Test func theProjectedPublisherStartsWithTheCurrentValue() {
    let profile = Profile()
    let recorder = RecordingSubscriber<String, Never>()
    profile.$name.subscribe(recorder)
    profile.name = "Grace"
    #expect(recorder.values == ["Ada", "Grace"])
    #expect(profile.name == "Grace")
  }

  @MainActor @Test func subscribersSeeTheNewValueBeforeThePropertyHoldsIt() {
    let profile = Profile()
    let seen = Mutex<[String]>([])
    let cancellable = profile.$name.dropFirst().sink { [profile] new in
      seen.withLock { $0.append("\(new) while the property is \(profile.name)") }
    }
    profile.name = "Grace"
    #expect(seen.withLock { $0 } == ["Grace while the property is Ada"])
    withExtendedLifetime(cancellable) {}
  }

  @MainActor @Test func objectWillChangeFiresBeforeEachChange() {
    let profile = Profile()
    let seen = Mutex<[String]>([])
    let cancellable = profile.objectWillChange.sink { [profile] in
      seen.withLock { $0.append("\(profile.name) \(profile.age)") }
    }
    profile.name = "Grace"
    profile.age = 37
    #expect(seen.withLock { $0 } == ["Ada 36", "Grace 36"])
    #expect(profile.name == "Grace" && profile.age == 37)
    withExtendedLifetime(cancellable) {}
  }

  @MainActor @Test func everyReadOfObjectWillChangeIsTheSamePublisher() {
    let profile = Profile()
    #expect(profile.objectWillChange === profile.objectWillChange)
  }

  @Test func superclassPropertiesSendTheSameObjectWillChange() {
    let employee = Employee()
    let count = Counter()
    let cancellable = employee.objectWillChange.sink { count.increment() }
    employee.team = "Tether"
    employee.badge = 2
    #expect(count.value == 2)
    withExtendedLifetime(cancellable) {}
  }

  @Test func aDeclaredObjectWillChangeIsKept() {
    let manual = Manual()
    let count = Counter()
    let cancellable = manual.objectWillChange.sink { count.increment() }
    manual.objectWillChange.send()
    #expect(count.value == 1)
    withExtendedLifetime(cancellable) {}
  }

  @MainActor @Test func assignToPublishedSetsThePropertyAndEndsWithTheObject() {
    let ticks = PassthroughSubject<Int, Never>()
    var clock: Clock? = Clock(ticks: ticks)
    let changes = Counter()
    let cancellable = clock?.objectWillChange.sink { changes.increment() }
    ticks.send(1)
    ticks.send(2)
    #expect(clock?.now == 2)
    #expect(changes.value == 2)
    #expect(ticks.subscriberCount == 1)
    clock = nil
    #expect(ticks.subscriberCount == 0)
    withExtendedLifetime(cancellable) {}
  }

  @MainActor @Test func valuesAssignedFromOtherThreadsAreAllKept() async throws {
    let ticks = PassthroughSubject<Int, Never>()
    let clock = Clock(ticks: ticks)
    let changes = Counter()
    let cancellable = clock.objectWillChange.sink { changes.increment() }
    await withCheckedContinuation { continuation in
      DispatchQueue(label: "ticker").async {
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
          for tick in 0..<250 { ticks.send(worker * 1000 + tick) }
        }
        continuation.resume()
      }
    }
    #expect(changes.value == 1000)
    #expect(clock.now % 1000 == 249)
    withExtendedLifetime(cancellable) {}
  }
}
