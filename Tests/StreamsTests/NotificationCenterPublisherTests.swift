import Foundation
import Streams
import TestSupport
import Testing

@Suite struct NotificationCenterPublisherTests {
  static let name = Notification.Name("tether.streams.test")

  @Test func keepsThePublisherContract() {
    // Notifications never complete; `finish` ends the stream the way users do, with an
    // operator that finishes and cancels it at the next notification.
    checkContract {
      let center = NotificationCenter()
      let stopped = Guarded(false)
      let stop = {
        stopped.withLock { $0 = true }
        center.post(name: Self.name, object: nil)
      }
      return ContractRig(
        publisher: center.publisher(for: Self.name).map { $0.name.rawValue }
          .prefix { _ in !stopped.withLock { $0 } },
        send: { _ in center.post(name: Self.name, object: nil) }, finish: stop, fail: stop)
    }
  }

  @Test func publishesPostedNotifications() {
    let center = NotificationCenter()
    let names = Guarded<[String]>([])
    let cancellable = center.publisher(for: Self.name).sink { notification in
      names.withLock { $0.append(notification.name.rawValue) }
    }
    center.post(name: Self.name, object: nil)
    center.post(name: Notification.Name("other"), object: nil)
    center.post(name: Self.name, object: nil)
    #expect(names.withLock { $0 } == [Self.name.rawValue, Self.name.rawValue])
    cancellable.cancel()
    center.post(name: Self.name, object: nil)
    #expect(names.withLock { $0 }.count == 2)
  }

  @Test func filtersBySender() {
    let center = NotificationCenter()
    let sender = NSObject()
    let count = Counter()
    let cancellable = center.publisher(for: Self.name, object: sender).sink { _ in
      count.increment()
    }
    center.post(name: Self.name, object: NSObject())
    center.post(name: Self.name, object: sender)
    #expect(count.value == 1)
    cancellable.cancel()
  }

  @Test func dropsNotificationsWithoutDemand() {
    let center = NotificationCenter()
    let count = Counter()
    let subscriber = NotificationCounter(count: count)
    center.publisher(for: Self.name).subscribe(subscriber)
    center.post(name: Self.name, object: nil)
    #expect(count.value == 0)
    subscriber.request(.max(1))
    center.post(name: Self.name, object: nil)
    center.post(name: Self.name, object: nil)
    #expect(count.value == 1)
    subscriber.cancel()
  }

  @Test func deliversNotificationsPostedOnOtherThreads() async throws {
    let center = NotificationCenter()
    let count = Counter()
    let cancellable = center.publisher(for: Self.name).sink { _ in count.increment() }
    await concurrentlyOnDedicatedThreads(iterations: 4) { _ in
      for _ in 0..<100 { center.post(name: Self.name, object: nil) }
    }
    #expect(count.value == 400)
    cancellable.cancel()
  }
}

/// Counts notifications; asks for nothing until told.
private final class NotificationCounter: Subscriber, Sendable {
  typealias Input = Notification
  typealias Failure = Never

  let count: Counter
  let subscription = Guarded<(any Subscription)?>(nil)

  init(count: Counter) { self.count = count }

  func receive(subscription: any Subscription) {
    self.subscription.withLock { $0 = subscription }
  }

  func receive(_ input: Notification) -> Subscribers.Demand {
    count.increment()
    return .none
  }

  func receive(completion: Subscribers.Completion<Never>) {}

  func request(_ demand: Subscribers.Demand) { subscription.withLock { $0 }?.request(demand) }

  func cancel() { subscription.withLock { $0 }?.cancel() }
}
