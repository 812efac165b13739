import Foundation

/// The shared watch stream of one cluster, as a pure state machine: events in, actions out,
/// no I/O and no clock (``EtcdWatchHub`` performs the actions and feeds the events).
///
/// Every watch of a cluster value is served by one stream holding one range watch over the
/// span of all their keys (from the smallest key to just past the largest; one key alone is
/// watched exactly). The span's events are handed to each watch whose key (or range) holds
/// them. One create request per stream, because etcd 3.4's gateway reads a watch's request
/// body only until it writes the first answer (Go's HTTP/1.1 server is half-duplex): of 200
/// create requests in one body, only the first 78 made watches on loopback, and how many do
/// depends on timing. Keys outside the span's holders that lie inside it cost bandwidth, not
/// correctness (they are dropped here).
///
/// The span is fixed per stream, so adding a watch re-opens the stream from the smallest
/// next revision of its watches. Additions are batched (``Action/scheduleReopen(afterFailures:)``
/// with 0 is a short window), so 200 keys added together re-open it once.
///
/// Invariants, kept where they are written:
/// - A watch's `next` is the first revision it has not delivered. Events below it are dropped
///   and each delivery moves it past its last event, so no change is delivered twice across
///   re-opens, and a re-open from the smallest `next` misses none.
/// - Only the current generation's messages count; a closed stream's late messages are
///   ignored.
/// - The stream is *current* only once its watch was created and its member then answered a
///   linearizable read (a probe). Watches told of a failure are told of recovery only then —
///   not when a stream merely re-attaches to a member that may itself be stale (paused, or
///   cut off from the quorum).
/// - A message longer than the stream's limit is skipped unread (``EtcdWatchMessage/oversized``)
///   and handled like compaction: every watch re-reads its keys and rejoins from there, so
///   one huge value does not stop the stream for the others.
/// - A silent stream is probed; a probe that fails is staleness: the holders hear of it at
///   once and the stream moves to the next endpoint. A stream that ends is re-opened on the
///   next endpoint; that is routine once (a member restarting) and reported from the second
///   failure in a row.
struct EtcdWatchMachine: Sendable {
  /// A watch's registration, unique per hub.
  typealias WatchID = UInt64

  /// One create request of a stream's body.
  struct Create: Sendable, Equatable {
    var key: Data
    var rangeEnd: Data?
    var startRevision: Int64
  }

  /// What the driver must do.
  enum Action: Sendable, Equatable {
    /// Send ``reopenDue()`` after the batch window (0 failures) or the back-off after
    /// `afterFailures` failures.
    case scheduleReopen(afterFailures: Int)
    /// Open stream `generation` on `endpoint` with this create request.
    case open(generation: UInt64, endpoint: Int, create: Create)
    /// Close stream `generation` (its messages are ignored from now on).
    case close(generation: UInt64)
    /// Hand these events to the watch, in order.
    case deliver(WatchID, [EtcdEvent])
    /// The watch's revision was compacted (or its events were lost in a message too long to
    /// read): read the current state, then send ``resynced(_:revision:)`` with the revision
    /// to go on from.
    case resync(WatchID)
    /// Ask `endpoint` for `key` (a linearizable read), then send
    /// ``probeAnswered(generation:error:)``.
    case probe(generation: UInt64, endpoint: Int, key: Data)
    /// Tell these watches that the watch fails (`error`) or is current again (`nil`).
    case report(EtcdError?, to: [WatchID])
  }

  private struct Watch: Sendable {
    var key: Data
    var rangeEnd: Data?
    var next: Int64
    /// Waiting for a re-read after compaction: not on any stream until ``resynced``.
    var resyncing = false
  }

  private struct Stream: Sendable {
    var generation: UInt64
    var endpoint: Int
    /// The watches the stream serves.
    var members: [WatchID]
    var created = false
    var probing = false
    var current = false
  }

  private var watches: [WatchID: Watch] = [:]
  private var stream: Stream?
  private var reopenScheduled = false
  private var generation: UInt64 = 0
  private var endpoint: Int
  private let endpointCount: Int
  /// Stream failures in a row (reset once a stream is current).
  private var failures = 0
  /// Watches told of a failure, to be told of recovery.
  private var failing: Set<WatchID> = []
  /// Cancellations of the stream's watch by the server in a row (back-off for re-opens).
  private var refusals = 0

  /// A machine for a cluster of `endpointCount` endpoints, starting on `endpoint`.
  init(endpointCount: Int, endpoint: Int = 0) {
    self.endpointCount = max(1, endpointCount)
    self.endpoint = endpoint % self.endpointCount
  }

  /// How many watches are registered.
  var watchCount: Int { watches.count }

  /// The watches the open stream serves (empty when none is open).
  var streamMembers: [WatchID] { stream?.members ?? [] }

  /// The next revision `watch` will deliver, if it is registered.
  func nextRevision(of watch: WatchID) -> Int64? { watches[watch]?.next }

  // MARK: Events

  /// A watch of `key` (up to `rangeEnd`) from revision `from` joins.
  mutating func add(_ id: WatchID, key: Data, rangeEnd: Data?, from: Int64) -> [Action] {
    watches[id] = Watch(key: key, rangeEnd: rangeEnd, next: from)
    return requestReopen(afterFailures: 0)
  }

  /// A watch leaves. The stream is not re-opened for it (its events are ignored until the
  /// next re-open), unless it was the last: then the stream closes.
  mutating func remove(_ id: WatchID) -> [Action] {
    watches[id] = nil
    failing.remove(id)
    guard watches.isEmpty, let stream else { return [] }
    self.stream = nil
    return [.close(generation: stream.generation)]
  }

  /// The scheduled re-open is due: close the stream and open one with every watch.
  mutating func reopenDue() -> [Action] {
    reopenScheduled = false
    var actions: [Action] = []
    if let stream {
      actions.append(.close(generation: stream.generation))
      self.stream = nil
    }
    let members = watches.filter { !$0.value.resyncing }.keys.sorted()
    guard !members.isEmpty else { return actions }
    generation &+= 1
    stream = Stream(generation: generation, endpoint: endpoint, members: members)
    actions.append(.open(generation: generation, endpoint: endpoint, create: span(of: members)))
    return actions
  }

  /// One range watch holding every watch of `members`, from the smallest next revision.
  private func span(of members: [WatchID]) -> Create {
    let served = members.map { watches[$0]! }
    if served.count == 1 {
      return Create(key: served[0].key, rangeEnd: served[0].rangeEnd, startRevision: served[0].next)
    }
    var low = served[0].key
    var high = Self.end(of: served[0])
    for watch in served.dropFirst() {
      if watch.key.lexicographicallyPrecedes(low) { low = watch.key }
      let end = Self.end(of: watch)
      if high != Self.everything, end == Self.everything || high.lexicographicallyPrecedes(end) {
        high = end
      }
    }
    return Create(key: low, rangeEnd: high, startRevision: served.map(\.next).min()!)
  }

  /// etcd's `range_end` for "every key from `key` on".
  private static let everything = Data([0])

  /// Where a watch's keys end (exclusive): the key followed by a zero byte for one key.
  private static func end(of watch: Watch) -> Data {
    watch.rangeEnd ?? watch.key + [0]
  }

  /// Whether `watch` holds `key`.
  private static func holds(_ watch: Watch, _ key: Data) -> Bool {
    guard let rangeEnd = watch.rangeEnd else { return key == watch.key }
    guard !key.lexicographicallyPrecedes(watch.key) else { return false }
    return rangeEnd == everything || key.lexicographicallyPrecedes(rangeEnd)
  }

  /// A message of stream `generation`.
  mutating func received(_ message: EtcdWatchMessage, generation: UInt64) -> [Action] {
    guard var stream, stream.generation == generation else { return [] }
    if let error = message.error {
      return fail(.unavailable(reason: "watch error: \(error)"), reportNow: false)
    }
    var actions: [Action] = []
    if message.created, !stream.created {
      stream.created = true
      if !stream.probing {
        stream.probing = true
        actions.append(.probe(generation: generation, endpoint: stream.endpoint, key: probeKey))
      }
    }
    self.stream = stream
    if message.oversized || (message.canceled && message.compactRevision > 0) {
      // The span's start was compacted, or a message too long to read was skipped (its
      // events are lost): every watch re-reads its keys, then rejoins.
      self.stream = nil
      actions.append(.close(generation: generation))
      for id in stream.members where watches[id] != nil {
        watches[id]!.resyncing = true
        actions.append(.resync(id))
      }
      return actions
    }
    if message.canceled {
      refusals += 1
      let reason = message.cancelReason.isEmpty ? "no reason given" : message.cancelReason
      self.stream = nil
      let ids = stream.members.filter { watches[$0] != nil }
      failing.formUnion(ids)
      return actions + [
        .close(generation: generation),
        .report(.unavailable(reason: "watch canceled: \(reason)"), to: ids),
      ] + requestReopen(afterFailures: refusals)
    }
    if !message.events.isEmpty {
      refusals = 0
      for id in stream.members {
        guard var watch = watches[id] else { continue }
        let fresh = message.events.filter {
          $0.keyValue.modRevision >= watch.next && Self.holds(watch, $0.keyValue.key)
        }
        guard let last = fresh.last else { continue }
        watch.next = last.keyValue.modRevision + 1
        watches[id] = watch
        actions.append(.deliver(id, fresh))
      }
    } else if message.isProgress, message.revision > 0 {
      // Everything up to this revision was sent.
      for id in stream.members where watches[id] != nil {
        watches[id]!.next = max(watches[id]!.next, message.revision + 1)
      }
    }
    return actions
  }

  /// Stream `generation` ended (closed by the member, refused, or broken).
  mutating func ended(generation: UInt64, error: EtcdError) -> [Action] {
    guard let stream, stream.generation == generation else { return [] }
    return fail(error, reportNow: false)
  }

  /// Stream `generation` has been silent for the check interval: probe its member.
  mutating func silent(generation: UInt64) -> [Action] {
    guard var stream, stream.generation == generation, !stream.probing else { return [] }
    stream.probing = true
    self.stream = stream
    return [.probe(generation: generation, endpoint: stream.endpoint, key: probeKey)]
  }

  /// The probe of stream `generation`'s member answered (`nil`) or failed.
  mutating func probeAnswered(generation: UInt64, error: EtcdError?) -> [Action] {
    guard var stream, stream.generation == generation else { return [] }
    stream.probing = false
    self.stream = stream
    if let error {
      return fail(
        .unavailable(reason: "the watched member did not answer: \(error)"), reportNow: true)
    }
    guard stream.created, !stream.current else { return [] }
    stream.current = true
    self.stream = stream
    failures = 0
    guard !failing.isEmpty else { return [] }
    defer { failing = [] }
    return [.report(nil, to: failing.sorted())]
  }

  /// The compacted watch re-read the current state; it goes on from `revision`.
  mutating func resynced(_ id: WatchID, revision: Int64) -> [Action] {
    guard var watch = watches[id] else { return [] }
    watch.next = max(watch.next, revision)
    watch.resyncing = false
    watches[id] = watch
    return requestReopen(afterFailures: 0)
  }

  // MARK: Helpers

  /// The key a probe reads: one the watches may read (with auth, the cluster root may not).
  private var probeKey: Data {
    stream?.members.first.flatMap { watches[$0]?.key } ?? Data([0])
  }

  private mutating func requestReopen(afterFailures count: Int) -> [Action] {
    guard !reopenScheduled else { return [] }
    reopenScheduled = true
    return [.scheduleReopen(afterFailures: count)]
  }

  private mutating func fail(_ error: EtcdError, reportNow: Bool) -> [Action] {
    guard let stream else { return [] }
    self.stream = nil
    failures += 1
    endpoint = (stream.endpoint + 1) % endpointCount
    var actions: [Action] = [.close(generation: stream.generation)]
    if reportNow || failures >= 2 {
      let ids = watches.keys.sorted()
      failing.formUnion(ids)
      actions.append(.report(error, to: ids))
    }
    // The first failure re-opens at once on the next endpoint; later ones back off.
    return actions + requestReopen(afterFailures: failures - 1)
  }
}
