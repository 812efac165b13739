import Foundation
import Tether
import TetherHTTP

/// A watch on a key (or a range of keys) that never misses or repeats a change.
///
/// It delivers every event from `startRevision` on, in order, exactly once, across everything
/// a real cluster does to a watch stream:
///
/// - a dropped stream (member killed, connection reset) reconnects with back-off, to the next
///   endpoint, from the last delivered revision + 1;
/// - a silent stream (a paused or partitioned member keeps the connection open and says
///   nothing) is noticed: after `watchCheckInterval` without a message the watcher asks its
///   member for the key (a progress check); no answer within the cluster's timeout moves the
///   watch to another endpoint;
/// - a start revision that was compacted is answered `created`, then `canceled` with
///   `compact_revision`: `resync` reads the current state and returns the revision to go on
///   from.
///
/// Delivery (`deliver`, `resync`, `report`) happens on the watcher's own task, one call at a
/// time.
final class EtcdWatcher: Sendable {
  struct Handlers: Sendable {
    /// Events in revision order, none at or before a revision already delivered.
    var deliver: @Sendable ([EtcdEvent]) -> Void
    /// The watch's start revision was compacted: read the current state, report it, and
    /// return the revision to watch from.
    var resync: @Sendable () async throws(EtcdError) -> Int64
    /// The watch is failing (`error`) or recovered (`nil`) after failing.
    var report: @Sendable (EtcdError?) -> Void
  }

  private let task: Task<Void, Never>

  /// Starts watching `key` (up to `rangeEnd`, if given) from `startRevision`.
  init(
    cluster: EtcdCluster, key: Data, rangeEnd: Data?, startRevision: Int64, handlers: Handlers
  ) {
    task = Task {
      await Self.run(
        cluster: cluster, key: key, rangeEnd: rangeEnd, next: startRevision, handlers: handlers)
    }
  }

  func cancel() { task.cancel() }

  private enum StreamEnd {
    case failed(EtcdError)
    case compacted
  }

  private static func run(
    cluster: EtcdCluster, key: Data, rangeEnd: Data?, next start: Int64, handlers: Handlers
  ) async {
    let next = Cell(start)
    // (consecutive failures, whether a failure was reported)
    let health = Cell((failures: 0, reported: false))
    var endpoint = cluster.preferredEndpoint
    while !Task.isCancelled {
      let end = await watchOnce(
        cluster: cluster, endpoint: endpoint, key: key, rangeEnd: rangeEnd, next: next,
        handlers: handlers,
        onCreated: {
          let recovered = health.withLock { health in
            defer { health = (0, false) }
            return health.reported
          }
          if recovered { handlers.report(nil) }
        })
      if Task.isCancelled { return }
      var failures = 0
      switch end {
      case .compacted:
        do throws(EtcdError) {
          let revision = try await handlers.resync()
          next.withLock { $0 = max($0, revision) }
          continue
        } catch {
          failures = health.withLock {
            $0.failures += 1; return $0.failures
          }
        }
      case .failed(let error):
        // One failure is routine (a member restarting); a second in a row is reported.
        let report = health.withLock { health -> Bool in
          health.failures += 1
          failures = health.failures
          guard health.failures >= 2, !health.reported else { return false }
          health.reported = true
          return true
        }
        if report { handlers.report(error) }
        endpoint = (endpoint + 1) % cluster.endpoints.count
      }
      let ceiling = min(2.0, 0.05 * pow(2, Double(min(failures, 8))))
      try? await Task.sleep(for: .seconds(Double.random(in: ceiling / 2...ceiling)))
    }
  }

  /// One watch stream on one endpoint, until it ends.
  private static func watchOnce(
    cluster: EtcdCluster, endpoint: Int, key: Data, rangeEnd: Data?, next: Cell<Int64>,
    handlers: Handlers, onCreated: @escaping @Sendable () -> Void
  ) async -> StreamEnd {
    var create: EtcdWire.Object = [
      "key": EtcdWire.base64(key), "start_revision": String(next.withLock { $0 }),
      "progress_notify": true,
    ]
    if let rangeEnd { create["range_end"] = EtcdWire.base64(rangeEnd) }
    var request = HTTPRequest(
      method: .post, url: cluster.endpoints[endpoint].appendingPathComponent("v3/watch"),
      headers: ["Content-Type": "application/json"],
      body: EtcdWire.data(["create_request": create]), timeout: cluster.timeout)
    if cluster.username != nil {
      do throws(EtcdError) {
        request.setHeader("Authorization", try await cluster.currentToken(endpoint: endpoint))
      } catch {
        return .failed(error)
      }
    }
    let response: HTTPStreamingResponse
    do {
      response = try await cluster.http.streamingResponse(for: request)
    } catch {
      return .failed(.unavailable(reason: "\(error)"))
    }
    guard response.status == 200 else {
      var body = Data()
      do {
        for try await chunk in response.body where body.count < 4096 { body.append(chunk) }
      } catch {}
      let failure = EtcdCluster.serverError(
        HTTPResponseMessage(status: response.status, body: body))
      if case .server(401, 16, _) = failure { cluster.forgetToken() }
      return .failed(failure)
    }
    let heard = Cell(ContinuousClock.now)
    // The silence monitor: a member that stops talking is asked for the key; if it does not
    // answer, the stream is abandoned (cancelling the reading task closes the connection).
    return await withTaskGroup(of: StreamEnd?.self) { group in
      group.addTask {
        var decoder = EtcdWatchDecoder(limit: cluster.http.maximumResponseSize)
        do {
          for try await chunk in response.body {
            heard.withLock { $0 = .now }
            for message in try decoder.feed(chunk) {
              if let error = message.error { return .failed(.unavailable(reason: error)) }
              if message.created { onCreated() }
              if message.canceled {
                if message.compactRevision > 0 { return .compacted }
                return .failed(.unavailable(reason: "watch canceled: \(message.cancelReason)"))
              }
              let from = next.withLock { $0 }
              let fresh = message.events.filter { $0.keyValue.modRevision >= from }
              if let last = fresh.last {
                next.withLock { $0 = max($0, last.keyValue.modRevision + 1) }
                handlers.deliver(fresh)
              } else if message.isProgress && message.revision > 0 {
                // Everything up to this revision was sent.
                next.withLock { $0 = max($0, message.revision + 1) }
              }
            }
          }
          return .failed(.unavailable(reason: "the watch stream ended"))
        } catch let error as EtcdError {
          return .failed(error)
        } catch {
          return .failed(.unavailable(reason: "\(error)"))
        }
      }
      group.addTask {
        while !Task.isCancelled {
          try? await Task.sleep(for: cluster.watchCheckInterval / 2)
          guard !Task.isCancelled else { return nil }
          let silence = ContinuousClock.now - heard.withLock { $0 }
          guard silence >= cluster.watchCheckInterval else { continue }
          do throws(EtcdError) {
            _ = try await cluster.range(key, endpoint: endpoint, countOnly: true)
            heard.withLock { $0 = .now }
          } catch {
            if case .cancelled = error { return nil }
            return .failed(.unavailable(reason: "the watched member did not answer: \(error)"))
          }
        }
        return nil
      }
      let end = await group.next() ?? nil
      group.cancelAll()
      return end ?? .failed(.cancelled)
    }
  }
}

/// A lock-protected value that closures and tasks can share.
final class Cell<Value: Sendable>: Sendable {
  private let state: Lock<Value>

  init(_ value: Value) { state = Lock(value) }

  func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
    state.withLock { value in
      var copy = value
      defer { value = copy }
      return body(&copy)
    }
  }
}
