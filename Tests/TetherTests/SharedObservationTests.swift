import Observation
import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherSupport
import TetherTesting

@Observable
final class CounterModel {
  @ObservationIgnored @Shared(.inMemory("count")) var count = 0
  @ObservationIgnored @Shared(.inMemory("settings")) var settings = Settings()
  @ObservationIgnored @Shared var external: Int

  init(store: TestStore<Int>) {
    _external = Shared(wrappedValue: 0, TestKey("external", store: store))
  }
}

/// `withObservationTracking` fires for shared values changed from anywhere, including from a
/// thread that is neither the main thread nor a Swift concurrency thread.
@Suite(.isolatedSharedState)
struct SharedObservationTests {
  @Test func firesWhenAnotherHolderMutatesFromABackgroundThread() async {
    let model = CounterModel(store: TestStore())
    let fired = Lock(0)
    withObservationTracking {
      _ = model.count
    } onChange: {
      fired.withLock { $0 += 1 }
    }
    @Shared(.inMemory("count")) var elsewhere = 0
    let shared = $elsewhere
    await onDedicatedThread { shared.withLock { $0 += 1 } }
    #expect(fired.withLock { $0 } == 1)
    #expect(model.count == 1)
  }

  @Test func firesWhenTheKeyYieldsAnExternalChange() async {
    let store = TestStore<Int>()
    let model = CounterModel(store: store)
    let fired = Lock(0)
    withObservationTracking {
      _ = model.external
    } onChange: {
      fired.withLock { $0 += 1 }
    }
    await onDedicatedThread { store.externalWrite(5) }
    #expect(fired.withLock { $0 } == 1)
    #expect(model.external == 5)
  }

  @Test func firesWhenADerivedMemberIsWritten() async {
    let model = CounterModel(store: TestStore())
    let fired = Lock(0)
    withObservationTracking {
      _ = model.settings
    } onChange: {
      fired.withLock { $0 += 1 }
    }
    let fontSize = model.$settings.fontSize
    await onDedicatedThread { fontSize.withLock { $0 = 20 } }
    #expect(fired.withLock { $0 } == 1)
    #expect(model.settings.fontSize == 20)
  }

  @Test func readingADerivedMemberTracksTheValue() async {
    let model = CounterModel(store: TestStore())
    let fired = Lock(0)
    let theme = model.$settings.theme
    withObservationTracking {
      _ = theme.wrappedValue
    } onChange: {
      fired.withLock { $0 += 1 }
    }
    let settings = model.$settings
    await onDedicatedThread { settings.withLock { $0.theme = .dark } }
    #expect(fired.withLock { $0 } == 1)
  }

  @Test func anEquatableNoOpDoesNotFire() {
    let model = CounterModel(store: TestStore())
    let fired = Lock(0)
    withObservationTracking {
      _ = model.count
    } onChange: {
      fired.withLock { $0 += 1 }
    }
    model.$count.withLock { $0 = 0 }
    #expect(fired.withLock { $0 } == 0)
  }
}
