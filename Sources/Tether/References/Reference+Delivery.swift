import Synchronization
import TetherSupport

/// Delivering changes outside the lock, in mutation order: listeners, and the saves that
/// `Reference+Saving` hands to the key.
extension Reference {
  /// What the thread that becomes the drainer delivers first.
  @usableFromInline
  struct DrainStart: Sendable {
    @usableFromInline let first: Delivery
    @usableFromInline let listeners: [Listener<Value>]

    @usableFromInline init(first: Delivery, listeners: [Listener<Value>]) {
      self.first = first
      self.listeners = listeners
    }
  }

  /// Queues `delivery` behind the one in progress, or makes the caller the drainer of it.
  /// Called with `state`'s lock held.
  @inlinable
  func enqueue(_ delivery: Delivery, in state: inout State) -> DrainStart? {
    guard drainer.claim(orQueue: delivery, in: &state.outbox) else { return nil }
    return DrainStart(first: delivery, listeners: state.listeners)
  }

  /// Delivers `start`, then whatever other threads queued meanwhile; called without the lock.
  @inlinable
  func drain(_ start: DrainStart) {
    deliver(start.first, to: start.listeners)
    // Nothing queued meanwhile (the common case): done without taking the lock again.
    drainer.drain(
      take: { batch in
        state.withLock { state in
          drainer.take(from: &state.outbox, into: &batch) ? state.listeners : nil
        }
      },
      deliver: { delivery, listeners in deliver(delivery, to: listeners) })
  }

  @inlinable
  func deliver(_ delivery: Delivery, to listeners: [Listener<Value>]) {
    switch delivery {
    case .change(let version, let value, let save, let basis):
      // The save is handed to the key before any listener hears of the change: a process that
      // exits as soon as it sees its own value (at-exit flushing writes what keys were given)
      // must not lose the write.
      if let save {
        requestSave(value, context: .didSet, basis: basis, sequence: save, completion: nil)
      }
      // `listeners` keeps every listener alive; borrowing them spares a retain and a release
      // per listener per change.
      listeners.withUnsafeBufferPointer { buffer in
        for index in buffer.indices {
          Unmanaged.passUnretained(buffer[index])._withUnsafeGuaranteedRef { listener in
            if listener.joinedAt < version { listener.receive(value) }
          }
        }
      }
    case .initial(let listener, let value):
      listener.receive(value)
    case .save(let value, let basis, let sequence, let completion):
      requestSave(
        value, context: .userInitiated, basis: basis, sequence: sequence, completion: completion)
    }
  }

  // MARK: Listeners

  func addListener(_ receive: @escaping @Sendable (Value) -> Void) -> ListenerToken {
    addReceiver(ClosureReceiver(receive))
  }

  func addReceiver(_ receiver: any ValueReceiver<Value>) -> ListenerToken {
    let (listener, drain) = state.withLock { state -> (Listener<Value>, DrainStart?) in
      let listener = Listener(joinedAt: state.version, receiver: receiver)
      state.listeners.append(listener)
      return (listener, enqueue(.initial(listener, state.value), in: &state))
    }
    if let drain { self.drain(drain) }
    return ListenerToken { [self] in
      guard listener.markCancelled() else { return }
      state.withLock { state in
        state.listeners.removeAll { $0 === listener }
      }
    }
  }
}
