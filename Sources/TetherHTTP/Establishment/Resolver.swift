import Foundation
import Streams
import Tether
import TetherSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Name resolution off every shared pool: `getaddrinfo` blocks (for as long as a DNS server
/// takes), so it runs on threads of the resolver's own, never on an ``EventLoop`` nor on
/// Swift's cooperative pool. Numeric addresses (`127.0.0.1`, `::1`) never reach those threads.
///
/// Lookups run concurrently, on at most `maximumThreads` threads, started as lookups arrive
/// and kept for the process afterwards: a slow DNS answer for one name holds one thread, not
/// every connection of the process; beyond the bound, lookups wait their turn in arrival order.
final class Resolver: Sendable {
  /// How a name becomes addresses: `getaddrinfo` (``systemLookUp(_:port:)``), or what a test
  /// puts in its place.
  typealias LookUp = @Sendable (_ host: String, _ port: Int) -> Result<[SocketAddress], HTTPError>

  /// The process's resolver: four threads at most.
  static let shared = Resolver(maximumThreads: 4)

  /// The most lookups that run at once.
  let maximumThreads: Int
  private let lookUp: LookUp

  private struct Job {
    let host: String
    let port: Int
    let completion: @Sendable (Result<[SocketAddress], HTTPError>) -> Void
  }

  private struct State {
    var jobs: [Job] = []
    /// Threads started (they never end).
    var threads = 0
    /// Threads that found no job and wait (or are about to) on `signal`.
    var waiting = 0
  }

  private let state = Lock(State())
  private let signal = DispatchSemaphore(value: 0)

  /// A resolver running at most `maximumThreads` lookups at once with `lookUp`.
  init(maximumThreads: Int, lookUp: @escaping LookUp = Resolver.systemLookUp) {
    self.maximumThreads = max(1, maximumThreads)
    self.lookUp = lookUp
  }

  /// Resolves `host` (an IP literal, `[v6]` or a name) and calls `completion` with its
  /// addresses: at once for a literal, from one of the resolver's threads otherwise.
  func resolve(
    _ host: String, port: Int,
    completion: @escaping @Sendable (Result<[SocketAddress], HTTPError>) -> Void
  ) {
    let name =
      host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    // A numeric host is converted without any lookup (`AI_NUMERICHOST`), so it never blocks.
    if let addresses = SocketAddress.numeric(name, port: port) {
      completion(.success(addresses))
      return
    }
    let job = Job(host: name, port: port, completion: completion)
    let mustStart = state.withLock { state -> Bool in
      state.jobs.append(job)
      // Every waiting thread takes one job; a thread more only when jobs outnumber them.
      guard state.jobs.count > state.waiting, state.threads < maximumThreads else { return false }
      state.threads += 1
      return true
    }
    signal.signal()
    if mustStart {
      let thread = Thread { [self] in run() }
      thread.name = "Tether resolver"
      thread.stackSize = 256 << 10
      thread.start()
    }
  }

  private func run() {
    KernelThreadName.set("Tether resolver")
    while true {
      let job = state.withLock { state -> Job? in
        guard !state.jobs.isEmpty else {
          state.waiting += 1
          return nil
        }
        return state.jobs.removeFirst()
      }
      if let job {
        job.completion(lookUp(job.host, job.port))
        continue
      }
      // A semaphore on a thread of our own: this thread exists to wait. A wake-up without a
      // job (its job was taken by a thread that was still running) only loops once more.
      signal.wait()
      state.withLock { $0.waiting -= 1 }
    }
  }

  /// `host`'s addresses from `getaddrinfo`, in the order it gives them (RFC 6724's).
  static func systemLookUp(_ host: String, port: Int) -> Result<[SocketAddress], HTTPError> {
    guard let addresses = SocketAddress.lookUp(host, port: port, numericOnly: false),
      !addresses.isEmpty
    else {
      return .failure(.unreachable(url: host, reason: "host not found"))
    }
    return .success(addresses)
  }
}
