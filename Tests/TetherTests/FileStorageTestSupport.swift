import Foundation
import Streams
import Synchronization
import Testing
import TetherSupport

@testable import Tether

// Helpers for the file-storage and file-watcher tests: a manual clock for the throttle
// window, an event log to wait on with a deadline, a write counter, and the key's protocol
// methods wrapped for `async` tests. (Temporary directories and the child process come from
// TestSupport.)

/// Virtual time for the throttle window: time moves only when a test calls `advance(by:)`.
final class ManualFileClock: FileStorageClock {
  private struct Timer {
    let deadline: Duration
    let id: Int
    let action: @Sendable () -> Void
  }
  private struct State {
    var now = Duration.seconds(1_000)
    var timers: [Timer] = []
    var nextID = 0
  }
  private let state = Lock(State())

  var now: Duration { state.withLock { $0.now } }

  func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> CancelOnce {
    let id = state.withLock { state in
      state.nextID += 1
      state.timers.append(Timer(deadline: state.now + delay, id: state.nextID, action: action))
      return state.nextID
    }
    return CancelOnce { [weak self] in
      self?.state.withLock { $0.timers.removeAll { $0.id == id } }
    }
  }

  /// Moves time forward, running every timer that comes due, in deadline order.
  func advance(by duration: Duration) {
    let due = state.withLock { state -> [Timer] in
      state.now += duration
      let due = state.timers.filter { $0.deadline <= state.now }.sorted {
        $0.deadline < $1.deadline
      }
      state.timers.removeAll { $0.deadline <= state.now }
      return due
    }
    for timer in due { timer.action() }
  }
}

/// A thread-safe log of events that a test can wait on, with a deadline.
final class EventLog<Event: Sendable>: Sendable {
  private struct Waiter {
    let condition: @Sendable ([Event]) -> Bool
    let continuation: CheckedContinuation<Bool, Never>
  }
  private struct State {
    var events: [Event] = []
    var waiters: [UUID: Waiter] = [:]
  }
  private let state = Lock(State())

  var events: [Event] { state.withLock { $0.events } }

  func append(_ event: Event) {
    let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
      state.events.append(event)
      let events = state.events
      let ready = state.waiters.filter { $0.value.condition(events) }
      for id in ready.keys { state.waiters[id] = nil }
      return ready.values.map(\.continuation)
    }
    ready.forEach { $0.resume(returning: true) }
  }

  /// Waits until `condition` holds for the events so far, or until `timeout` passes.
  ///
  /// - Returns: Whether the condition held in time.
  @discardableResult
  func wait(
    timeout: Duration = .seconds(30), until condition: @escaping @Sendable ([Event]) -> Bool
  ) async -> Bool {
    let id = UUID()
    return await withCheckedContinuation { continuation in
      let satisfied = state.withLock { state -> Bool in
        if condition(state.events) { return true }
        state.waiters[id] = Waiter(condition: condition, continuation: continuation)
        return false
      }
      if satisfied {
        continuation.resume(returning: true)
        return
      }
      let (seconds, attoseconds) = timeout.components
      let deadline =
        DispatchTime.now()
        + .nanoseconds(
          Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
      DispatchQueue.global().asyncAfter(deadline: deadline) { [weak self] in
        let expired = self?.state.withLock { $0.waiters.removeValue(forKey: id) }
        expired?.continuation.resume(returning: false)
      }
    }
  }

  /// Waits for an event matching `matches` at or after index `start`.
  @discardableResult
  func wait(
    from start: Int = 0, timeout: Duration = .seconds(30),
    for matches: @escaping @Sendable (Event) -> Bool
  ) async -> Bool {
    await wait(timeout: timeout) { $0.dropFirst(start).contains(where: matches) }
  }
}

/// What a subscribed key reported, in a form tests compare.
enum KeyEvent<Value: Sendable & Equatable>: Sendable, Equatable {
  case value(Value)
  case initialValue
  case failure(String)
  case loading(Bool)
}

extension FileStorageKey where Value: Equatable {
  /// Loads then subscribes, as a new reference does, logging every event after the load.
  func subscribe(into log: EventLog<KeyEvent<Value>>) -> SharedSubscription {
    load(context: .userInitiated, continuation: LoadContinuation { _ in })
    // Behind a queued job the load runs on the file's queue: done before subscribing.
    storage.waitForWrites()
    return subscribe(
      context: .userInitiated,
      subscriber: SharedSubscriber { event in
        switch event {
        case .value(let value): log.append(.value(value))
        case .initialValue: log.append(.initialValue)
        case .failure(let error): log.append(.failure("\(error)"))
        case .loading(let isLoading): log.append(.loading(isLoading))
        }
      })
  }
}

extension FileStorageKey {
  /// The result of `load(context: .initialValue(…))`.
  func loadResult(_ context: LoadContext<Value>) -> Result<Value?, any Error> {
    let result = Lock<Result<Value?, any Error>?>(nil)
    load(
      context: context, continuation: LoadContinuation { value in result.withLock { $0 = value } })
    // The file key resumes synchronously.
    return result.withLock { $0 } ?? .failure(CancellationError())
  }

  /// The result of `load(context:)`, resumed on whichever thread the key resumes it (a
  /// user-initiated load behind a queued or pending write resumes from the file's queue).
  func awaitedLoadResult(_ context: LoadContext<Value>) async -> Result<Value?, any Error> {
    await withCheckedContinuation { continuation in
      load(
        context: context,
        continuation: LoadContinuation { continuation.resume(returning: $0) })
    }
  }

  /// Calls `save`, derived from `version`, and waits for its continuation.
  func saveAndWait(
    _ value: Value, _ context: SaveContext = .userInitiated,
    derivedFrom version: SharedVersion? = nil
  ) async throws {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      save(
        value, context: context,
        continuation: SaveContinuation(version: version) { continuation.resume(with: $0) })
    }
  }

  /// Calls `save` without waiting, logging the outcome.
  func save(_ value: Value, _ context: SaveContext = .didSet, outcomes: EventLog<String>? = nil) {
    save(
      value, context: context,
      continuation: SaveContinuation { result in
        switch result {
        case .success: outcomes?.append("saved")
        case .failure(let error): outcomes?.append("failed \(error)")
        }
      })
  }
}

/// Reads and decodes a JSON file.
func decodeFile<Value: Decodable>(_ url: URL, as type: Value.Type = Value.self) -> Value? {
  guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
  return try? JSONDecoder().decode(type, from: data)
}

/// Writes `text` to `url` in place (truncate and write, no rename), as an editor might.
func writeInPlace(_ text: String, to url: URL) throws {
  let handle = try FileHandle(forWritingTo: url)
  try handle.truncate(atOffset: 0)
  try handle.write(contentsOf: Data(text.utf8))
  try handle.close()
}

/// Counts the file writes the watcher sees for `url` (each atomic replace is one `replaced`
/// event; `written` is not counted, since a child process another test spawns can report one
/// for a file it never wrote), using a fence file to know that every earlier event has arrived.
final class WriteCounter: Sendable {
  private let log = EventLog<String>()
  private let watches: [CancelOnce]
  private let fence: URL

  init(_ url: URL) {
    fence = url.deletingLastPathComponent().appendingPathComponent(".fence-\(UUID().uuidString)")
    let log = self.log
    watches = [
      FileWatcher.shared.watch(url.path) { change in
        log.append(change == .replaced ? "write" : "\(change)")
      },
      FileWatcher.shared.watch(fence.path) { change in
        if change == .replaced { log.append("fence") }
      },
    ]
  }

  /// Everything the watcher reported, in order (`write` for each write).
  var events: [String] { log.events }

  /// The writes seen once every event before this call has been delivered.
  func settledCount() async -> Int {
    let before = log.events.filter { $0 == "fence" }.count
    #expect((try? Data("x".utf8).write(to: fence, options: .atomic)) != nil)
    let arrived = await log.wait { $0.filter { $0 == "fence" }.count > before }
    #expect(arrived, "the fence write was not observed")
    return log.events.filter { $0 == "write" }.count
  }

  deinit { watches.forEach { $0.cancel() } }
}
