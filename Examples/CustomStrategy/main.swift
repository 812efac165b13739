import Foundation
import Tether

// `swift run custom-strategy`: a strategy written outside Tether (TextFileKey.swift), used
// through `@Shared` like the built-in ones.

/// Waits for the next value from `iterator` that satisfies `condition`, for up to 5 seconds.
func next<Value: Sendable>(
  _ iterator: inout AsyncStream<Value>.Iterator, where condition: (Value) -> Bool
) async -> Value? {
  let deadline = ContinuousClock.now + .seconds(5)
  while ContinuousClock.now < deadline {
    guard let value = await iterator.next() else { return nil }
    if condition(value) { return value }
  }
  return nil
}

func run() async throws -> Bool {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("tether-custom-strategy-\(UUID().uuidString)")
  defer { try? FileManager.default.removeItem(at: directory) }
  let file = directory.appendingPathComponent("count")
  print("Each value is a small text file in \(directory.path)")

  @Shared(.textFile("count", in: directory)) var count = 0
  print("1. No file yet, so count starts at its default: \(count)")

  $count.withLock { $0 += 1 }
  $count.withLock { $0 += 1 }
  let saved = try String(contentsOf: file, encoding: .utf8)
  print("2. Two increments later count is \(count) and the file says \"\(saved)\"")

  @Shared(.textFile("count", in: directory)) var sameFile = 100
  print("3. A second declaration shares the value (its default 100 is ignored): \(sameFile)")

  var changes = $count.values.makeAsyncIterator()
  _ = await changes.next()  // the current value
  try Data("41".utf8).write(to: file, options: .atomic)
  guard let external = await next(&changes, where: { $0 == 41 }) else {
    print("error: the external write never arrived")
    return false
  }
  print("4. Another program wrote 41 to the file; subscribe noticed it: count is \(external)")

  try FileManager.default.removeItem(at: file)
  guard await next(&changes, where: { $0 == 0 }) != nil else {
    print("error: the deletion never arrived")
    return false
  }
  print("5. The file was deleted, so count is back to its default: \(count)")

  try Data("forty-two".utf8).write(to: file, options: .atomic)
  let deadline = ContinuousClock.now + .seconds(5)
  while $count.loadError == nil, ContinuousClock.now < deadline { await Task.yield() }
  print(
    "6. Unreadable text keeps the value (\(count)) and sets loadError: \($count.loadError.map { "\($0)" } ?? "nil")"
  )
  guard $count.loadError != nil else { return false }
  return await versions()
}

/// A versioned strategy (RevisionKey.swift): a change made before someone else's write
/// arrived is refused, not written over it.
func versions() async -> Bool {
  let store = RevisionStore()
  @Shared(RevisionKey(name: "stock", store: store)) var stock = 10
  $stock.withLock { $0 -= 1 }
  $stock.withLock { $0 -= 1 }
  print("7. Two saves over their own revisions: stock \(stock), store \(store.read("stock"))")

  $stock.withLock { stock in
    // Another machine writes while this body runs; the news of it waits for the lock.
    _ = try? store.write("stock", "100")
    stock -= 1
  }
  let deadline = ContinuousClock.now + .seconds(5)
  while stock != 100 || $stock.saveError == nil, ContinuousClock.now < deadline {
    await Task.yield()
  }
  print(
    "8. A change derived from revision 2 after revision 3 was written is refused: stock "
      + "\(stock), store \(store.read("stock")), saveError: \($stock.saveError.map { "\($0)" } ?? "nil")"
  )
  return stock == 100 && $stock.saveError is RevisionStore.Conflict
    && store.read("stock").text == "100"
}

let succeeded = try await run()
print(succeeded ? "Done." : "Failed.")
exit(succeeded ? 0 : 1)
