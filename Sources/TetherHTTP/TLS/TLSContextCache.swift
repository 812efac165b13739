import Dispatch
import Streams
import Tether
import TetherSupport

/// The process's ``TLSContext``s, one per configuration, so that clients with the same TLS
/// settings share one.
///
/// Making a context reads the whole system trust store (`SSL_CTX_set_default_verify_paths`
/// parses `/etc/ssl/certs/ca-certificates.crt`): 50–100 ms on a busy two-core machine, 30 to
/// 60 times a whole new TLS connection. An `HTTPClient` made per request must not pay it each
/// time.
///
/// ```swift
/// let context = try TLSContextCache.shared.context(for: .init(trustedCertificates: [caPEM]))
/// ```
///
/// An async caller (a request) awaits ``contextOffThePool(for:)``, which makes a
/// missing context on ``builder``, a serial queue of its own, and never on Swift's cooperative
/// pool, whose few threads every task shares, nor on an I/O loop, whose connections it would
/// stall. One serial queue is enough: a context is made once per configuration, and a second
/// request for one being made waits for it there and then finds it instead of making another.
///
/// Holds at most ``capacity`` configurations; the one used least recently goes first (its
/// sessions keep it alive until they end). Safe from any thread: the lock is never held while
/// a context is made, so two synchronous callers asking for a new configuration at once may
/// both make one, and the first stored wins.
final class TLSContextCache: Sendable {
  /// What a ``TLSContext`` is made from.
  struct Configuration: Hashable, Sendable {
    /// PEM certificate authorities trusted besides the system's.
    var trustedCertificates: [String] = []
    /// The client certificate and key for mutual TLS, if any.
    var clientIdentity: TLSContext.ClientIdentity?
  }

  /// The cache every client shares.
  static let shared = TLSContextCache()

  /// How many configurations are kept.
  let capacity: Int
  private let entries = Lock<[(configuration: Configuration, context: TLSContext)]>([])
  private let make: @Sendable (Configuration) throws(TLSFailure) -> TLSContext

  /// An empty cache that keeps up to `capacity` configurations, each made by `make` (a test
  /// gives one that records where and how often it runs).
  init(
    capacity: Int = 16,
    make: @escaping @Sendable (Configuration) throws(TLSFailure) -> TLSContext = {
      try TLSContext(
        trustedCertificates: $0.trustedCertificates, clientIdentity: $0.clientIdentity)
    }
  ) {
    self.capacity = max(1, capacity)
    self.make = make
  }

  /// The context for `configuration`, made the first time it is asked for.
  ///
  /// - Throws: what ``TLSContext/init(trustedCertificates:clientIdentity:library:)`` throws
  ///   (``TLSFailure/libraryUnavailable(_:)`` where OpenSSL cannot be loaded); a failure is
  ///   not kept, so a corrected configuration is tried afresh.
  func context(for configuration: Configuration) throws(TLSFailure) -> TLSContext {
    if let found = lookUp(configuration) { return found }
    let made = try make(configuration)
    return entries.withLock { entries -> TLSContext in
      if let index = entries.firstIndex(where: { $0.configuration == configuration }) {
        return entries[index].context
      }
      entries.append((configuration, made))
      if entries.count > capacity { entries.removeFirst() }
      return made
    }
  }

  /// The context for `configuration`: the one held, at once, or one made on ``builder`` and
  /// awaited (50–100 ms, reading the system trust store) without holding a thread of the
  /// cooperative pool.
  ///
  /// - Throws: what ``TLSContext/init(trustedCertificates:clientIdentity:library:)`` throws; a
  ///   failure is not kept.
  func contextOffThePool(for configuration: Configuration) async throws(TLSFailure) -> TLSContext {
    if let found = lookUp(configuration) { return found }
    let made = await withCheckedContinuation {
      (continuation: CheckedContinuation<Result<TLSContext, TLSFailure>, Never>) in
      Self.builder.async {
        continuation.resume(
          returning: Result { () throws(TLSFailure) in
            try self.context(for: configuration)
          })
      }
    }
    return try made.get()
  }

  /// Where contexts are made for async callers: a serial queue with a name of its own, so a
  /// thread list or a profile shows the time spent there.
  static let builder: DispatchQueue = {
    let queue = DispatchQueue(label: "tether.tls-context-builder", qos: .userInitiated)
    queue.setSpecific(key: onBuilder, value: true)
    return queue
  }()

  /// `true` on ``builder`` (`DispatchQueue.getSpecific(key:)`), `nil` anywhere else.
  static let onBuilder = DispatchSpecificKey<Bool>()

  /// The context held for `configuration`, if any, without making one.
  func cachedContext(for configuration: Configuration) -> TLSContext? {
    lookUp(configuration)
  }

  /// How many configurations are held.
  var count: Int { entries.withLock { $0.count } }

  private func lookUp(_ configuration: Configuration) -> TLSContext? {
    entries.withLock { entries -> TLSContext? in
      guard let index = entries.firstIndex(where: { $0.configuration == configuration }) else {
        return nil
      }
      // Most recently used last: eviction takes the first.
      let entry = entries.remove(at: index)
      entries.append(entry)
      return entry.context
    }
  }
}
