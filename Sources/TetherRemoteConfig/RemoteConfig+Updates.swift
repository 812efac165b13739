import Streams
import Synchronization
import Tether
import TetherSupport

extension RemoteConfig {
  /// A ``ConfigUpdate`` for every activation that changed something, naming the changed keys.
  ///
  /// An activation that changes nothing (a 304, an identical document) emits nothing. Use
  /// `updates.values` for `for await`.
  public var updates: AnyPublisher<ConfigUpdate, Never> { updateSubject.eraseToAnyPublisher() }

  /// Each ``ConfigDecodingError`` as it is found: a value in the active config or the defaults
  /// that cannot be read as its key's type. ``decodeErrors`` lists the current ones.
  public var decodeErrorPublisher: AnyPublisher<ConfigDecodingError, Never> {
    decodeErrorSubject.eraseToAnyPublisher()
  }

  /// The key's value now, then each distinct new value as activations and new defaults change
  /// it.
  ///
  /// Every change is delivered (the buffer is unbounded). Breaking out of the loop or
  /// cancelling its task stops observing.
  ///
  /// ```swift
  /// for await title in config.values(for: .welcomeTitle) { print(title) }
  /// ```
  public func values<Value>(for key: ConfigKey<Value>) -> AsyncStream<Value> {
    let (stream, continuation) = AsyncStream<Value>.makeStream()
    let token = observe(key, initial: true) { continuation.yield($0) }
    continuation.onTermination = { _ in token.cancel() }
    return stream
  }

  /// Calls `onChange` with the key's value whenever it changes to a different value (by the
  /// raw value and layer it is read from); first with the current value when `initial`.
  func observe<Value>(
    _ key: ConfigKey<Value>, initial: Bool, onChange: @escaping @Sendable (Value) -> Void
  ) -> AnyCancellable {
    let last = Lock<ConfigValue?>(initial ? nil : decoded(key).resolve(key).origin)
    return addObserver(names: [key.name]) { [weak self] _ in
      guard let self else { return }
      let (value, origin) = self.decoded(key).resolve(key)
      let isNew = last.withLock { last in
        defer { last = origin }
        return last != origin
      }
      if isNew { onChange(value) }
    }
  }

  /// Registers an observer; it first receives `.registered`, in order with every change.
  func addObserver(
    names: Set<String>?, handle: @escaping @Sendable (ConfigEvent) -> Void
  ) -> AnyCancellable {
    let observer = ConfigObserver(names: names, handle: handle)
    let id = state.withLock { state in
      let id = state.nextObserverID
      state.nextObserverID += 1
      state.observers[id] = observer
      delivery.append(([observer], .registered), to: &state.deliveries)
      return id
    }
    deliver()
    return AnyCancellable { [weak self] in
      _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
    }
  }

  /// Queues `event` for the current observers. Call with the state locked, in the same
  /// critical section as the change, so events keep the order of the changes.
  func enqueue(_ event: ConfigEvent, in state: inout State) {
    let targets = state.observers.values.filter { $0.wants(event) }
    if case .changed(let names, true) = event {
      delivery.append(([], .changed(names, activation: true)), to: &state.deliveries)
    }
    if !targets.isEmpty { delivery.append((targets, event), to: &state.deliveries) }
  }

  /// Delivers queued events outside the lock. One caller delivers at a time, so events reach
  /// each observer in order; a change made by an observer is queued behind the current event.
  func deliver() {
    guard state.withLock({ delivery.claimQueued(in: &$0.deliveries) }) else { return }
    delivery.drain(
      take: { batch in
        state.withLock { delivery.take(from: &$0.deliveries, into: &batch) ? () : nil }
      },
      deliver: { next, _ in
        if next.targets.isEmpty, case .changed(let names, true) = next.event {
          updateSubject.send(ConfigUpdate(updatedKeys: names))
        }
        for observer in next.targets { observer.handle(next.event) }
      })
  }
}
