import Dispatch
import Foundation
import Streams
import Synchronization
import TestSupport
import Testing

/// The shape of a Combine view model: main-actor state written from `sink` closures.
@MainActor private final class ItemsModel {
  var items: [Int] = []
  var completions = 0
  var events: [String] = []
  var cancellables = Set<AnyCancellable>()

  func bind(_ items: some Publisher<Int, Never>) {
    items.sink { [weak self] in self?.items.append($0) }.store(in: &cancellables)
  }

  func bindLoading(_ items: some Publisher<Int, ContractError>) {
    items
      .handleEvents(
        receiveOutput: { [weak self] in self?.events.append("output \($0)") },
        receiveCompletion: { [weak self] _ in self?.events.append("completion") }
      )
      .sink(
        receiveCompletion: { [weak self] _ in self?.completions += 1 },
        receiveValue: { [weak self] in self?.items.append($0) }
      )
      .store(in: &cancellables)
  }
}

/// State owned by an actor other than the main one.
private actor Tally {
  var values: [Int] = []
  var cancellable: AnyCancellable?

  func bind(_ subject: PassthroughSubject<Int, Never>) {
    cancellable = subject.sink { value in self.values.append(value) }
  }
}

/// Lets the main actor run queued work until `condition` holds, or throws `TimeoutError`.
/// (`waitUntil` runs its condition off the main actor, so it cannot read main-actor state.)
@MainActor func onMainActor(
  until description: String, timeout: Duration = .seconds(10), _ condition: () -> Bool
) async throws {
  let deadline = Deadline.after(timeout)
  while !condition() {
    if deadline.hasPassed { throw TimeoutError(waitingFor: description, after: timeout) }
    await Task.yield()
  }
}

@Suite struct IsolatedSinkTests {
  @MainActor @Test func aMainActorClosureGetsMainThreadValuesAtOnce() {
    let subject = PassthroughSubject<Int, Never>()
    let model = ItemsModel()
    model.bind(subject)
    subject.send(1)
    subject.send(2)
    #expect(model.items == [1, 2])
  }

  @MainActor @Test func valuesFromOtherThreadsReachTheMainActorInOrder() async throws {
    let subject = PassthroughSubject<Int, Never>()
    let model = ItemsModel()
    model.bind(subject)
    let sender = DispatchQueue(label: "sender")
    sender.async {
      for value in 0..<500 { subject.send(value) }
    }
    try await onMainActor(until: "500 values") { model.items.count == 500 }
    #expect(model.items == Array(0..<500))
  }

  @MainActor @Test func aHandOffFromAnotherThreadKeepsItsPlaceBehindQueuedValues() async throws {
    let subject = PassthroughSubject<Int, Never>()
    let model = ItemsModel()
    model.bind(subject)
    await withCheckedContinuation { continuation in
      DispatchQueue(label: "sender").async {
        subject.send(1)
        subject.send(2)
        continuation.resume()
      }
    }
    subject.send(3)  // on the main thread, but 1 and 2 may still be queued: it waits its turn
    try await onMainActor(until: "three values") { model.items.count == 3 }
    #expect(model.items == [1, 2, 3])
  }

  @MainActor @Test func cancellingDropsWhatIsStillQueued() async throws {
    let subject = PassthroughSubject<Int, Never>()
    let model = ItemsModel()
    model.bind(subject)
    let sent = DispatchSemaphore(value: 0)
    DispatchQueue(label: "sender").async {
      for value in 0..<100 { subject.send(value) }
      sent.signal()
    }
    sent.wait()  // the main actor is busy here, so every value is still queued
    model.cancellables.removeAll()
    // Give the drain task its turn on the main actor.
    for _ in 0..<10 { await Task.yield() }
    #expect(model.items.isEmpty)
    #expect(subject.subscriberCount == 0)
  }

  @MainActor @Test func completionAndHandlersRunOnTheMainActorAfterTheValues() async throws {
    let subject = PassthroughSubject<Int, ContractError>()
    let model = ItemsModel()
    model.bindLoading(subject)
    subject.send(1)
    #expect(model.events == ["output 1"])
    DispatchQueue(label: "sender").async {
      subject.send(2)
      subject.send(completion: .finished)
    }
    try await onMainActor(until: "the completion") { model.completions == 1 }
    #expect(model.items == [1, 2])
    #expect(model.events == ["output 1", "output 2", "completion"])
  }

  @Test func aClosureIsolatedToAnotherActorRunsThereInOrder() async throws {
    let subject = PassthroughSubject<Int, Never>()
    let tally = Tally()
    await tally.bind(subject)
    DispatchQueue.concurrentPerform(iterations: 1) { _ in
      for value in 0..<200 { subject.send(value) }
    }
    try await waitUntil("200 values on the actor") { await tally.values.count == 200 }
    #expect(await tally.values == Array(0..<200))
  }

  @Test func aNonisolatedClosureIsCalledOnTheDeliveringThread() async {
    let subject = PassthroughSubject<Int, Never>()
    let threads = Mutex<[Bool]>([])
    let cancellable = subject.sink { _ in
      threads.withLock { $0.append(Thread.isMainThread) }
    }
    await withCheckedContinuation { continuation in
      DispatchQueue(label: "sender").async {
        subject.send(1)
        // Delivered before `send` returned: nothing was queued.
        #expect(threads.withLock { $0 } == [false])
        continuation.resume()
      }
    }
    withExtendedLifetime(cancellable) {}
  }
}
