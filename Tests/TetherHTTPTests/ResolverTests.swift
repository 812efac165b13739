import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TetherHTTP

/// The resolver's threads: lookups run concurrently, up to a bound. The lookup function is
/// injected: one that blocks for `slow.test` until the test lets it go, standing in for a DNS
/// server that is slow to answer.
@Suite struct ResolverTests {
  /// Answers every name with 127.0.0.1; `slow.test` only once `release` is signalled.
  private func resolver(threads: Int, release: DispatchSemaphore) -> Resolver {
    Resolver(maximumThreads: threads) { host, port in
      if host == "slow.test" { release.wait() }
      return .success(SocketAddress.numeric("127.0.0.1", port: port)!)
    }
  }

  @Test func aSlowLookupDoesNotHoldAnother() async throws {
    let release = DispatchSemaphore(value: 0)
    let resolver = resolver(threads: 2, release: release)
    let slow = Answers()
    resolver.resolve("slow.test", port: 80) { _ in slow.record() }
    let fast = Answers()
    resolver.resolve("fast.test", port: 80) { _ in fast.record() }
    try await waitUntil("the fast name is resolved", timeout: .seconds(5)) { fast.count == 1 }
    #expect(slow.count == 0)
    release.signal()
    try await waitUntil("the slow name is resolved", timeout: .seconds(5)) { slow.count == 1 }
  }

  @Test func noMoreLookupsRunAtOnceThanTheBound() async throws {
    let running = Concurrency()
    let release = DispatchSemaphore(value: 0)
    let resolver = Resolver(maximumThreads: 2) { host, port in
      running.enter()
      defer { running.leave() }
      release.wait()
      return .success(SocketAddress.numeric("127.0.0.1", port: port)!)
    }
    let answers = Answers()
    for index in 0..<5 {
      resolver.resolve("name\(index).test", port: 80) { _ in answers.record() }
    }
    try await waitUntil("two lookups run", timeout: .seconds(5)) {
      running.now == 2
    }
    for _ in 0..<5 { release.signal() }
    try await waitUntil("every name is resolved", timeout: .seconds(5)) { answers.count == 5 }
    #expect(running.most == 2)
  }

  @Test func aLiteralIsConvertedAtOnceWithoutALookup() {
    let resolver = Resolver(maximumThreads: 1) { _, _ in
      Issue.record("a literal reached the lookup")
      return .failure(.unreachable(url: "", reason: "no"))
    }
    let answers = Answers()
    resolver.resolve("[::1]", port: 443) { result in
      if case .success(let addresses) = result, addresses.first?.isIPv6 == true {
        answers.record()
      }
    }
    #expect(answers.count == 1)
  }
}

/// Counts answers from the resolver's threads.
private final class Answers: Sendable {
  private let state = LockedState(0)
  var count: Int { state.withLock { $0 } }
  func record() { state.withLock { $0 += 1 } }
}

/// How many lookups run at once, and the most that ever did.
private final class Concurrency: Sendable {
  private let state = LockedState((now: 0, most: 0))
  var now: Int { state.withLock { $0.now } }
  var most: Int { state.withLock { $0.most } }

  func enter() {
    state.withLock {
      $0.now += 1
      $0.most = max($0.most, $0.now)
    }
  }

  func leave() { state.withLock { $0.now -= 1 } }
}
