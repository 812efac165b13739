import Synchronization
import TestSupport
import Testing
import Tether
import TetherTesting

/// A key's own writes that no save in flight answers for (a background retry of a failed save,
/// a write whose outcome was unknown landing late), told to the reference with their versions:
/// the next save is conditional on them, even one the key already holds in its queue.
@Suite(.isolatedSharedState)
struct SaveOrderingOwnWritesTests {
  /// Saves the key holds, and its subscriber: the test resumes and reports by hand.
  final class Saves: Sendable {
    let continuations = Mutex<[SaveContinuation]>([])
    let subscriber = Mutex<SharedSubscriber<Int>?>(nil)
    var count: Int { continuations.withLock { $0.count } }
    subscript(index: Int) -> SaveContinuation { continuations.withLock { $0[index] } }
  }

  struct HeldSaveKey: SharedKey {
    let saves: Saves
    var id: ObjectIdentifier { ObjectIdentifier(saves) }

    func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
      continuation.resume(returning: 1, version: SharedVersion(1))
    }

    func subscribe(
      context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
    ) -> SharedSubscription {
      saves.subscriber.withLock { $0 = subscriber }
      return SharedSubscription {}
    }

    func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {
      saves.continuations.withLock { $0.append(continuation) }
    }
  }

  /// A holder of a ``HeldSaveKey`` that loaded 1 (version 1), changed to 2, and whose save
  /// of 2 the key now holds (`saves[0]`).
  static func firstSaveHeld(_ saves: Saves) async throws -> Shared<Int> {
    let value = Shared(wrappedValue: 0, HeldSaveKey(saves: saves))
    try await waitUntil("loaded") { value.wrappedValue == 1 }
    value.withLock { $0 = 2 }
    try await waitUntil("the first save") { saves.count == 1 }
    return value
  }

  /// A save made while the key's background retry of the previous one was being written (the
  /// key queues it behind the retry) asks again when it writes: the retry's version, not the
  /// one it was handed, so it is not refused as a conflict with its own retry's write.
  @Test func aSaveQueuedBehindABackgroundRetryWritesOverTheRetry() async throws {
    let saves = Saves()
    let value = try await Self.firstSaveHeld(saves)
    #expect(saves[0].versionNow == SharedVersion(1))
    saves[0].resume(throwing: CancellationError())
    value.withLock { $0 = 3 }
    try await waitUntil("the second save") { saves.count == 2 }
    #expect(saves[1].version == SharedVersion(1))
    saves[0].resolvedLater(with: .success(()), version: SharedVersion(2))
    #expect(saves[1].versionNow == SharedVersion(2), "its own retry's write is its basis")
    #expect(value.saveError == nil)
    saves[1].resume(version: SharedVersion(3))
    #expect(value.wrappedValue == 3)
    #expect(value.saveError == nil)
  }

  /// A write whose outcome was unknown, landing late, is told through the subscriber: the
  /// holders keep their value, and the next save is conditional on it.
  @Test func aLateLandingToldByTheSubscriberIsTheBasisOfTheNextSave() async throws {
    let saves = Saves()
    let value = try await Self.firstSaveHeld(saves)
    saves[0].resume(throwing: CancellationError())
    saves.subscriber.withLock { $0 }?.yieldOwnWrite(version: SharedVersion(2))
    #expect(value.wrappedValue == 2)
    value.withLock { $0 = 3 }
    try await waitUntil("the second save") { saves.count == 2 }
    #expect(saves[1].version == SharedVersion(2))
    saves[1].resume(version: SharedVersion(3))
    #expect(value.saveError == nil)
  }
}
