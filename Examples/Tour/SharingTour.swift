import Observation
import Streams
import Synchronization
import Tether

/// The settings the sharing tour shares.
struct TourSettings: Equatable, Sendable {
  var theme = "light"
  var fontSize = 12
}

/// A model of the kind SwiftUI and server code keep: it reads a shared value.
@Observable
final class TourCounterModel {
  @ObservationIgnored @Shared(.inMemory("tour.count")) var count = 0
}

extension SharedReaderKey where Self == InMemoryKey<Int>.Default {
  /// A key that carries its default, so declarations need not repeat it.
  static var tourVisits: Self { Self[.inMemory("tour.visits"), default: 0] }
}

/// The tour section on Sharing.
func sharingTour() async {
  print("\n-- Sharing: one value, every holder --")

  // Two declarations of the same key share one value; the second default is ignored.
  code(
    #"@Shared(.inMemory("tour.count")) var count = 0"#,
    #"@Shared(.inMemory("tour.count")) var sameCount = 100"#,
    "$count.withLock { $0 += 1 }")
  @Shared(.inMemory("tour.count")) var count = 0
  @Shared(.inMemory("tour.count")) var sameCount = 100
  $count.withLock { $0 += 1 }
  print("count is \(count); a second declaration of the key sees \(sameCount)")

  // withLock is atomic across every holder and thread.
  code("8 tasks × 1,000 times: shared.withLock { $0 += 1 }")
  let shared = $count
  await withTaskGroup(of: Void.self) { group in
    for _ in 0..<8 { group.addTask { for _ in 0..<1_000 { shared.withLock { $0 += 1 } } } }
  }
  print("after 8 tasks x 1,000 increments: \(count)")

  // A key with its own default.
  code(
    #"static var tourVisits: Self { Self[.inMemory("tour.visits"), default: 0] }"#,
    "@Shared(.tourVisits) var visits; $visits.withLock { $0 += 1 }")
  @Shared(.tourVisits) var visits
  $visits.withLock { $0 += 1 }
  print("visits (declared without a default): \(visits)")

  // Members are shared values too: reads and writes go through the parent.
  code(
    #"@Shared(.inMemory("tour.settings")) var settings = TourSettings()"#,
    #"$settings.theme.withLock { $0 = "dark" }"#)
  @Shared(.inMemory("tour.settings")) var settings = TourSettings()
  $settings.theme.withLock { $0 = "dark" }
  print("settings after writing $settings.theme: \(settings)")

  // The publisher: the current value, then every change in order; no-ops emit nothing.
  code(
    "$count.publisher.sink { … }",
    "$count.withLock { $0 = 1 }; $count.withLock { $0 = 1 }; $count.withLock { $0 = 2 }")
  let emitted = Mutex<[Int]>([])
  let cancellable = $count.publisher.sink { value in emitted.withLock { $0.append(value) } }
  $count.withLock { $0 = 1 }
  $count.withLock { $0 = 1 }  // unchanged: not emitted
  $count.withLock { $0 = 2 }
  print("publisher emitted: \(emitted.withLock { $0 })")
  cancellable.cancel()

  // Observation: a model holding @Shared is re-tracked when the value changes anywhere.
  code(
    "withObservationTracking { _ = model.count } onChange: { … }",
    "$count.withLock { $0 += 1 }   // through another holder")
  let model = TourCounterModel()
  let fired = Mutex(false)
  withObservationTracking {
    _ = model.count
  } onChange: {
    fired.withLock { $0 = true }
  }
  $count.withLock { $0 += 1 }
  print("withObservationTracking fired after a write elsewhere: \(fired.withLock { $0 })")

  // values: the current value first, then the latest each time the loop asks.
  code(
    "var latest = $count.values.makeAsyncIterator(); await latest.next()",
    "5 times: $count.withLock { $0 += 10 }; await latest.next()")
  var latest = $count.values.makeAsyncIterator()
  let first = await latest.next() ?? -1
  for _ in 0..<5 { $count.withLock { $0 += 10 } }
  let newest = await latest.next() ?? -1
  print("values yielded \(first), then skipped to the latest: \(newest)")

  // Isolated scopes: a block (or a test) gets its own values.
  code(
    #"withSharedStorage(.isolated) { Shared(wrappedValue: 0, .inMemory("tour.count")).wrappedValue }"#
  )
  let isolated = withSharedStorage(.isolated) {
    Shared(wrappedValue: 0, .inMemory("tour.count")).wrappedValue
  }
  print("the same key inside withSharedStorage(.isolated): \(isolated)")
}
