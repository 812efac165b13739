import Dispatch
import Foundation

/// Runs blocking work on a thread of its own and waits for it without blocking the caller's
/// thread.
///
/// Swift concurrency runs every task on a cooperative pool with one thread per core: two on
/// CI. A test that blocks one of them (a stress loop, `DispatchQueue.concurrentPerform`, a
/// blocking read) stalls every other test's `await` for as long as it runs, and their
/// deadlines then expire for no fault of theirs. Hand such work to this function instead.
///
/// What `body` throws is rethrown to the caller; a `body` that cannot throw makes a call that
/// cannot either.
@discardableResult
public func onDedicatedThread<T: Sendable, Failure: Error>(
  _ body: @escaping @Sendable () throws(Failure) -> T
) async throws(Failure) -> T {
  let result = await withCheckedContinuation { continuation in
    let thread = Thread { continuation.resume(returning: Result(catching: body)) }
    thread.name = "tether-test-dedicated"
    thread.start()
  }
  return try result.get()
}

/// Runs `body` for each index in `0..<iterations` in parallel, one thread of its own per
/// index, and returns when every iteration has finished.
///
/// Not `DispatchQueue.concurrentPerform`: on Linux its iterations run on Dispatch's global
/// pool, whose threads are the ones Swift concurrency runs on (see ``onDedicatedThread(_:)``),
/// so eight iterations spinning there stall every other test's `await`.
public func concurrentlyOnDedicatedThreads(
  iterations: Int, _ body: @escaping @Sendable (Int) -> Void
) async {
  await withTaskGroup(of: Void.self) { group in
    for index in 0..<iterations {
      group.addTask { await onDedicatedThread { body(index) } }
    }
  }
}
