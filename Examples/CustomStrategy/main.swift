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
  return try await versions()
}

/// Waits up to 5 seconds for `condition`.
func eventually(_ condition: () async -> Bool) async -> Bool {
  let deadline = ContinuousClock.now + .seconds(5)
  while ContinuousClock.now < deadline {
    if await condition() { return true }
    try? await Task.sleep(for: .milliseconds(1))
  }
  return await condition()
}

/// The stored text of `name`, read the way the key reads it.
func stored(_ name: String, in store: RevisionStore) async -> String? {
  await withCheckedContinuation { continuation in
    store.read(name) { text, _ in continuation.resume(returning: text) }
  }
}

/// A versioned strategy (RevisionKey.swift) whose saves resume late, from the store's queue:
/// its own saves never conflict with each other, a change derived from an older version is
/// refused and every holder takes the stored value, and `update` stays exact while another
/// machine writes.
func versions() async throws -> Bool {
  let store = RevisionStore()
  @Shared(RevisionKey(name: "stock", store: store)) var stock = 10
  for _ in 0..<20 { $stock.withLock { $0 -= 1 } }
  guard await eventually({ await stored("stock", in: store) == "-10" }) else {
    print("error: the holder's own saves did not all land (stock \(stock))")
    return false
  }
  print(
    "7. Twenty rapid changes, saved one at a time over their own versions: stock \(stock), "
      + "store \(await stored("stock", in: store) ?? "nothing"), saveError: "
      + "\($stock.saveError.map { "\($0)" } ?? "nil")")

  $stock.withLock { stock in
    // Another machine writes while this body runs; the news of it waits for the lock.
    store.write("stock", "100")
    stock -= 1
  }
  guard await eventually({ stock == 100 && $stock.saveError != nil }) else {
    print("error: the refused change did not converge (stock \(stock))")
    return false
  }
  print(
    "8. A change derived from the version before someone else's write is refused, and the "
      + "holder takes the stored value: stock \(stock), store "
      + "\(await stored("stock", in: store) ?? "nothing"), saveError: \($stock.saveError!)")

  // Another machine takes 30 while this one takes 30 through `update`.
  let other = Task {
    for _ in 0..<30 {
      await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        decrementElsewhere(store, then: { done.resume() })
      }
    }
  }
  for _ in 0..<30 { try await $stock.update { $0 -= 1 } }
  await other.value
  guard await eventually({ await stored("stock", in: store) == "40" && stock == 40 }) else {
    print("error: updates were lost (stock \(stock))")
    return false
  }
  print("9. 30 updates here and 30 decrements elsewhere, all exact: stock \(stock)")
  return $stock.saveError == nil
}

/// Another machine's decrement: read, then write over the version read, again on a conflict.
func decrementElsewhere(_ store: RevisionStore, then done: @escaping @Sendable () -> Void) {
  store.read("stock") { text, version in
    let next = (text.flatMap { Int($0) } ?? 0) - 1
    store.write("stock", String(next), over: version) { result in
      if case .failure = result { decrementElsewhere(store, then: done) } else { done() }
    }
  }
}

let succeeded = try await run()
print(succeeded ? "Done." : "Failed.")
exit(succeeded ? 0 : 1)
