import Dispatch
import Foundation
import Synchronization
import TetherSupport

/// Runs closures on one actor in the order they were handed in: at once when handed in on the
/// main actor for a main-actor closure with nothing waiting, otherwise queued and run by one
/// task on the actor.
///
/// This is how a `sink` closure isolated to the caller's actor receives values delivered on
/// other threads: the publisher's thread never waits for the actor, and the closure sees the
/// values in the order the publisher sent them. Only the main actor is recognised as "already
/// there" (Swift has no public, non-trapping check for other actors): a closure isolated to
/// another actor always runs in a task on it. After `cancel()` nothing queued runs.
///
/// The order is kept by the package's one drainer, `OrderedDelivery`: whoever delivers (a task
/// on the actor, or a main-actor caller running its own action at once) then runs whatever was
/// queued meanwhile, a whole batch per lock round trip.
final class ActorQueue: Sendable {
  /// What is waiting.
  private struct State: Sendable {
    var pending = DeliveryQueue<@Sendable () -> Void>()
    var cancelled = false
  }

  /// What `run(_:)` does with an action.
  private enum Decision {
    case runNow, queued, queuedAndStartDrain, dropped
  }

  /// The actor the actions run on.
  let actor: any Actor
  private let isMainActor: Bool
  private let state = Lock(State())
  /// Who runs the actions: set while a task on the actor (or a main-actor caller) runs them.
  private let delivery = OrderedDelivery()
  /// Set by `cancel()`: the batch being run stops at its next action.
  private let cancelled = Atomic<Bool>(false)

  /// The queue for closures isolated to `isolation` (`nil` when they have no actor): `other`
  /// when it serves that actor, so the closures of one subscription run in the order their
  /// events arrived.
  static func serving(_ isolation: (any Actor)?, sharing other: ActorQueue?) -> ActorQueue? {
    guard let isolation else { return nil }
    if let other, other.actor === isolation { return other }
    return ActorQueue(isolation)
  }

  init(_ actor: any Actor) {
    self.actor = actor
    isMainActor = actor === MainActor.shared
  }

  /// Runs `action` on the actor, after every action handed in before it.
  ///
  /// `action` must be safe to run on the actor: it is a closure isolated to it.
  func run(_ action: @escaping @Sendable () -> Void) {
    let onActor = isMainActor && ActorQueue.isOnMainActor
    let decision = state.withLock { state -> Decision in
      if state.cancelled { return .dropped }
      if onActor {
        return delivery.claim(orQueue: action, in: &state.pending) ? .runNow : .queued
      }
      return delivery.enqueue(action, in: &state.pending) ? .queuedAndStartDrain : .queued
    }
    switch decision {
    case .runNow:
      // Checks (and traps on) the assumption that the main thread is the main actor's.
      MainActor.assumeIsolated {
        action()
        drain()
      }
    case .queuedAndStartDrain:
      startDrain()
    case .queued, .dropped:
      break
    }
  }

  /// Drops everything queued; nothing handed in afterwards runs.
  func cancel() {
    cancelled.store(true, ordering: .releasing)
    let dropped = state.withLock { state in
      state.cancelled = true
      defer { state.pending.removeAll() }
      return state.pending
    }
    _ = dropped  // released here, outside the lock: a closure's captures may run a deinit
  }

  /// Whether the caller runs on the main actor: on the main thread, or in a block of the main
  /// dispatch queue (the main actor's executor), which Swift Testing runs on another thread.
  private static var isOnMainActor: Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) != nil
  }

  /// A key set on the main dispatch queue, so that its blocks can be recognised on any thread.
  private static let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
  }()

  private func startDrain() {
    if isMainActor {
      Task { @MainActor in self.drain() }
    } else {
      Task { [actor] in await ActorQueue.drain(self, on: actor) }
    }
  }

  private static func drain(_ queue: ActorQueue, on actor: isolated any Actor) {
    queue.drain()
  }

  /// Runs the queued actions in order, a batch at a time, until none is left; called on the
  /// actor by the deliverer.
  private func drain() {
    delivery.drain(
      take: { batch in
        state.withLock { state in delivery.take(from: &state.pending, into: &batch) ? () : nil }
      },
      deliver: { action, _ in
        if !cancelled.load(ordering: .acquiring) { action() }
      })
  }
}
