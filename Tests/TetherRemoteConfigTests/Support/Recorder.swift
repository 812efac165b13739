import Streams
import Synchronization
import TestSupport
import Tether
import TetherSupport

/// Collects what an `AsyncStream` or a publisher delivers, so a test can wait for the n-th
/// value with a deadline instead of sleeping.
final class Recorder<Value: Sendable>: Sendable {
  private final class Storage: Sendable {
    let values = Lock<[Value]>([])
  }
  private let received = Storage()
  private let subscription = Lock<AnyCancellable?>(nil)

  init() {}

  /// Records every value `stream` yields until the recorder is released.
  convenience init(_ stream: AsyncStream<Value>) {
    self.init()
    let task = Task { [received] in
      for await value in stream { received.values.withLock { $0.append(value) } }
    }
    subscription.withLock { $0 = AnyCancellable { task.cancel() } }
  }

  /// Records every value `publisher` emits until the recorder is released.
  convenience init(_ publisher: AnyPublisher<Value, Never>) {
    self.init()
    let cancellable = publisher.sink { [received] value in
      received.values.withLock { $0.append(value) }
    }
    subscription.withLock { $0 = cancellable }
  }

  var values: [Value] { received.values.withLock { $0 } }

  /// Waits until at least `count` values arrived, and returns them all.
  @discardableResult
  func waitForValues(
    _ count: Int, timeout: Duration = Deadline.defaultTimeout, _ what: String = "values"
  ) async throws -> [Value] {
    try await waitUntil("\(count) \(what)", timeout: timeout) { values.count >= count }
    return values
  }

  func cancel() { subscription.withLock { $0 }?.cancel() }

  deinit { cancel() }
}
