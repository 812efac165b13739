import Dispatch
import Foundation
import Streams
import Synchronization
import Testing
import Tether
import TetherSupport
import TetherTesting

/// Collects what a sink receives.
final class Recorder<Value: Sendable>: Sendable {
  private let received = Lock<[Value]>([])
  var values: [Value] { received.withLock { $0 } }
  func append(_ value: Value) { received.withLock { $0.append(value) } }
}

/// A subscriber that asks for `initial` values, then only when the test calls `request`.
final class DemandingSubscriber<Value: Sendable>: Subscriber, Sendable {
  typealias Input = Value
  typealias Failure = Never
  let recorder = Recorder<Value>()
  private let subscription = Lock<(any Subscription)?>(nil)
  private let initial: Subscribers.Demand

  init(initial: Subscribers.Demand) { self.initial = initial }

  func receive(subscription: any Subscription) {
    self.subscription.withLock { $0 = subscription }
    subscription.request(initial)
  }
  func receive(_ input: Value) -> Subscribers.Demand {
    recorder.append(input)
    return .none
  }
  func receive(completion: Subscribers.Completion<Never>) {}
  func request(_ demand: Subscribers.Demand) {
    subscription.withLock { $0 }?.request(demand)
  }
  func cancel() { subscription.withLock { $0 }?.cancel() }
}

@Suite(.isolatedSharedState)
struct SharedPublisherTests {
  @Test func emitsTheCurrentValueThenEachChangeInOrder() {
    @Shared(.inMemory("p")) var value = 1
    let recorder = Recorder<Int>()
    let cancellable = $value.publisher.sink { recorder.append($0) }
    $value.withLock { $0 = 2 }
    $value.withLock { $0 = 3 }
    #expect(recorder.values == [1, 2, 3])
    cancellable.cancel()
    $value.withLock { $0 = 4 }
    #expect(recorder.values == [1, 2, 3])
  }

  @Test func anEquatableNoOpEmitsNothingButANonEquatableValueAlwaysEmits() {
    @Shared(.inMemory("same")) var value = 5
    let recorder = Recorder<Int>()
    let cancellable = $value.publisher.sink { recorder.append($0) }
    $value.withLock { $0 = 5 }
    #expect(recorder.values == [5])

    let opaque = Shared(value: Opaque())
    let opaqueRecorder = Recorder<Int>()
    let opaqueCancellable = opaque.publisher.sink { opaqueRecorder.append($0.number) }
    opaque.withLock { _ in }
    #expect(opaqueRecorder.values == [0, 0])
    _ = (cancellable, opaqueCancellable)
  }

  @Test func emissionsFromManyThreadsFollowMutationOrder() async {
    @Shared(.inMemory("ordered")) var value = 0
    let recorders = (0..<3).map { _ in Recorder<Int>() }
    let cancellables = recorders.map { recorder in $value.publisher.sink { recorder.append($0) } }
    let shared = $value
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<8 {
        group.addTask { for _ in 0..<2_000 { shared.withLock { $0 += 1 } } }
      }
    }
    for recorder in recorders { #expect(recorder.values == Array(0...16_000)) }
    _ = cancellables
  }

  @Test func aLateSubscriberSeesIncreasingValuesWhileOthersMutate() async {
    @Shared(.inMemory("late")) var value = 0
    let shared = $value
    let producer = Task.detached { for _ in 0..<5_000 { shared.withLock { $0 += 1 } } }
    let recorder = Recorder<Int>()
    let cancellable = $value.publisher.sink { recorder.append($0) }
    await producer.value
    let values = recorder.values
    #expect(values.last == 5_000)
    #expect(zip(values, values.dropFirst()).allSatisfy { $0 + 1 == $1 })
    _ = cancellable
  }

  @Test func aSinkMayMutateTheValueItWatches() {
    @Shared(.inMemory("reentrant")) var value = 0
    let shared = $value
    let recorder = Recorder<Int>()
    let cancellable = $value.publisher.sink { received in
      recorder.append(received)
      if received == 1 { shared.withLock { $0 = 2 } }
    }
    $value.withLock { $0 = 1 }
    #expect(recorder.values == [0, 1, 2])
    #expect(value == 2)
    _ = cancellable
  }

  @Test func aChangeMadeOnAnotherThreadWhileASinkRunsIsDeliveredAfterIt() {
    @Shared(.inMemory("handoff")) var value = 0
    let shared = $value
    let recorder = Recorder<Int>()
    let otherThreadMutated = DispatchSemaphore(value: 0)
    let cancellable = $value.publisher.sink { received in
      recorder.append(received)
      guard received == 1 else { return }
      // This thread is delivering: the other thread's change is queued, not delivered there.
      Thread {
        shared.withLock { $0 = 2 }
        otherThreadMutated.signal()
      }.start()
      #expect(otherThreadMutated.wait(timeout: .now() + 10) == .success)
      #expect(recorder.values == [0, 1])
    }
    $value.withLock { $0 = 1 }
    #expect(recorder.values == [0, 1, 2])
    _ = cancellable
  }

  @Test func finiteDemandGetsTheCurrentValueThenTheNewestWhenItAsks() {
    @Shared(.inMemory("demand")) var value = 0
    let subscriber = DemandingSubscriber<Int>(initial: .max(1))
    $value.publisher.subscribe(subscriber)
    $value.withLock { $0 = 1 }
    $value.withLock { $0 = 2 }
    #expect(subscriber.recorder.values == [0])
    subscriber.request(.max(1))
    #expect(subscriber.recorder.values == [0, 2])
    subscriber.request(.max(2))
    $value.withLock { $0 = 3 }
    $value.withLock { $0 = 4 }
    $value.withLock { $0 = 5 }
    #expect(subscriber.recorder.values == [0, 2, 3, 4])
    subscriber.cancel()
    subscriber.request(.unlimited)
    #expect(subscriber.recorder.values == [0, 2, 3, 4])
  }

  @Test func externalChangesAreEmitted() {
    let store = TestStore<Int>()
    @Shared(TestKey(store: store)) var value = 0
    let recorder = Recorder<Int>()
    let cancellable = $value.publisher.sink { recorder.append($0) }
    store.externalWrite(8)
    store.externalDelete()
    #expect(recorder.values == [0, 8, 0])
    _ = cancellable
  }

  @Test func aDerivedMemberEmitsOnlyItsOwnChanges() {
    @Shared(.inMemory("settings-publisher")) var settings = Settings()
    let recorder = Recorder<Int>()
    let cancellable = $settings.fontSize.publisher.sink { recorder.append($0) }
    $settings.withLock { $0.theme = .dark }
    $settings.fontSize.withLock { $0 = 14 }
    #expect(recorder.values == [12, 14])
    _ = cancellable
  }

  @Test func aReaderPublishesTheSharedValuesChanges() {
    @Shared(.inMemory("reader-publisher")) var value = "x"
    let recorder = Recorder<String>()
    let cancellable = SharedReader($value).publisher.sink { recorder.append($0) }
    $value.withLock { $0 = "y" }
    #expect(recorder.values == ["x", "y"])
    _ = cancellable
  }
}
