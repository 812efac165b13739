import Foundation
import TetherSupport

extension NotificationCenter {
  /// Returns a publisher that emits the notifications this center posts with the given name
  /// (and, if given, from the given object).
  ///
  /// Each subscription registers its own observer when it subscribes and removes it when
  /// cancelled. Notifications arrive one at a time, on the posting thread (or, when another
  /// thread is delivering a notification at that moment, from that thread, in order: as in
  /// Combine, a `Notification`, which Foundation does not mark `Sendable`, may be handed
  /// across threads). One posted while the subscriber has no demand is dropped, as in
  /// Combine. The publisher never completes.
  ///
  /// ```swift
  /// NotificationCenter.default.publisher(for: .configDidChange).sink { reload($0) }
  /// ```
  public func publisher(
    for name: Notification.Name, object: AnyObject? = nil
  ) -> NotificationCenter.Publisher {
    Publisher(center: self, name: name, object: object)
  }

  /// A publisher that emits a notification center's notifications of one name.
  public struct Publisher: Streams.Publisher {
    /// Each element is a posted notification.
    public typealias Output = Notification
    /// Notifications never fail.
    public typealias Failure = Never

    /// The notification center this publisher observes.
    public let center: NotificationCenter
    /// The name of the notifications to publish.
    public let name: Notification.Name
    /// The object whose notifications to publish; `nil` for any sender.
    public let object: AnyObject?

    /// Creates a publisher of `center`'s notifications named `name`, from `object` if given.
    public init(center: NotificationCenter, name: Notification.Name, object: AnyObject? = nil) {
      self.center = center
      self.name = name
      self.object = object
    }

    /// Registers an observer for the subscriber.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let subscription = NotificationSubscription(subscriber, center: center)
      subscription.start(name: name, object: object)
    }
  }
}

private final class NotificationSubscription<Downstream: Subscriber>: Subscription,
  ScheduledTarget
where Downstream.Input == Notification, Downstream.Failure == Never {
  private struct State {
    var demand = Subscribers.Demand.none
    var observer: (any NSObjectProtocol)?
    var isCancelled = false
  }

  private let downstream: SerializedDownstream<Downstream>
  private let center: NotificationCenter
  private let state = Lock(unchecked: State())

  init(_ downstream: Downstream, center: NotificationCenter) {
    self.downstream = SerializedDownstream(downstream)
    self.center = center
  }

  deinit {
    if let observer = state.withLockUnchecked({ $0.observer }) { center.removeObserver(observer) }
  }

  func start(name: Notification.Name, object: AnyObject?) {
    downstream.send(.subscription(self))
    // The observer holds this subscription weakly (the subscriber owns it), through an
    // existential: a closure capturing `self` would capture the subscriber's metatype.
    let target = WeakTarget<Notification>(self)
    let observer = center.addObserver(forName: name, object: object, queue: nil) {
      target.receiveScheduled($0)
    }
    let live = state.withLockUnchecked { state -> Bool in
      guard !state.isCancelled else { return false }
      state.observer = observer
      return true
    }
    if !live { center.removeObserver(observer) }
  }

  /// A notification was posted.
  func receiveScheduled(_ notification: Notification) {
    let deliver = state.withLockUnchecked { state -> Bool in
      guard !state.isCancelled, state.demand > .none else { return false }
      state.demand -= 1
      return true
    }
    if deliver { request(downstream.send(.value(notification))) }
  }

  func request(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    state.withLockUnchecked { $0.demand += demand }
  }

  func cancel() {
    let observer = state.withLockUnchecked { state -> (any NSObjectProtocol)? in
      state.isCancelled = true
      defer { state.observer = nil }
      return state.observer
    }
    downstream.cancel()
    if let observer { center.removeObserver(observer) }
  }
}
