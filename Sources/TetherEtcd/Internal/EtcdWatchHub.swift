import Foundation
import Streams
import Tether
import TetherHTTP
import TetherSupport

/// Runs one cluster value's shared watch stream: performs ``EtcdWatchMachine``'s actions and
/// feeds it events. Kept small and dumb; every decision is the machine's.
///
/// One loop task owns the machine and the handlers and takes events one at a time, so
/// deliveries happen in order, one call at a time, and no lock guards the machine. Stream
/// readers, timers and probes are tasks that only send events back. The loop holds its
/// cluster weakly: when the cluster value goes away, the hub goes with it and the loop ends.
final class EtcdWatchHub: Sendable {
  private enum Event: Sendable {
    case add(EtcdWatchMachine.WatchID, Data, Data?, Int64, EtcdWatcher.Handlers)
    case remove(EtcdWatchMachine.WatchID)
    case reopenDue
    case received(UInt64, [EtcdWatchMessage])
    case ended(UInt64, EtcdError)
    case silent(UInt64)
    case probeAnswered(UInt64, EtcdError?)
    case resynced(EtcdWatchMachine.WatchID, Int64)
  }

  /// How long additions are gathered before the stream re-opens with them.
  static let batchWindow = Duration.milliseconds(10)
  /// The back-off between re-opens after failures in a row.
  static let backoff = Backoff(initial: .milliseconds(50), maximum: .seconds(2))

  private let events: AsyncStream<Event>
  private let feed: AsyncStream<Event>.Continuation
  private let state = Lock((nextID: EtcdWatchMachine.WatchID(0), started: false))

  init() {
    (events, feed) = AsyncStream<Event>.makeStream()
  }

  deinit { feed.finish() }

  /// Registers a watch; its events go to `handlers` until ``remove(_:)``.
  func add(
    cluster: EtcdCluster, key: Data, rangeEnd: Data?, from: Int64,
    handlers: EtcdWatcher.Handlers
  ) -> EtcdWatchMachine.WatchID {
    let (id, start) = state.withLock { state in
      defer {
        state.nextID += 1
        state.started = true
      }
      return (state.nextID, !state.started)
    }
    if start {
      let events = events
      let feed = feed
      let reference = WeakCluster(cluster)
      Task { await Self.run(events: events, feed: feed, reference: reference) }
    }
    feed.yield(.add(id, key, rangeEnd, from, handlers))
    return id
  }

  /// Unregisters a watch (again is harmless).
  func remove(_ id: EtcdWatchMachine.WatchID) { feed.yield(.remove(id)) }

  // MARK: The loop

  private static func run(
    events: AsyncStream<Event>, feed: AsyncStream<Event>.Continuation, reference: WeakCluster
  ) async {
    guard let endpointCount = reference.cluster?.endpoints.count else { return }
    var machine = EtcdWatchMachine(
      endpointCount: endpointCount, endpoint: reference.cluster?.preferredEndpoint ?? 0)
    var handlers: [EtcdWatchMachine.WatchID: EtcdWatcher.Handlers] = [:]
    var streams: [UInt64: (task: Task<Void, Never>, heard: Cell<ContinuousClock.Instant>)] = [:]
    for await event in events {
      let cluster = reference.cluster
      let actions: [EtcdWatchMachine.Action]
      switch event {
      case .add(let id, let key, let rangeEnd, let from, let watch):
        handlers[id] = watch
        actions = machine.add(id, key: key, rangeEnd: rangeEnd, from: from)
      case .remove(let id):
        handlers[id] = nil
        actions = machine.remove(id)
      case .reopenDue:
        actions = machine.reopenDue()
      case .received(let generation, let messages):
        actions = messages.flatMap { machine.received($0, generation: generation) }
      case .ended(let generation, let error):
        actions = machine.ended(generation: generation, error: error)
      case .silent(let generation):
        actions = machine.silent(generation: generation)
      case .probeAnswered(let generation, let error):
        actions = machine.probeAnswered(generation: generation, error: error)
      case .resynced(let id, let revision):
        actions = machine.resynced(id, revision: revision)
      }
      for action in actions {
        switch action {
        case .scheduleReopen(let failures):
          let wait =
            failures == 0 ? batchWindow : backoff.delay(afterFailures: failures) ?? .seconds(2)
          Task {
            try? await Task.sleep(for: wait)
            feed.yield(.reopenDue)
          }
        case .open(let generation, let endpoint, let create):
          guard let cluster else { continue }
          let heard = Cell(ContinuousClock.now)
          let task = Task {
            await stream(
              cluster: cluster, generation: generation, endpoint: endpoint, creates: [create],
              heard: heard, feed: feed)
          }
          streams[generation] = (task, heard)
        case .close(let generation):
          streams.removeValue(forKey: generation)?.task.cancel()
        case .deliver(let id, let delivered):
          handlers[id]?.deliver(delivered)
        case .resync(let id):
          guard let watch = handlers[id] else { continue }
          Task {
            var failures = 0
            while !Task.isCancelled {
              do throws(EtcdError) {
                feed.yield(.resynced(id, try await watch.resync()))
                return
              } catch {
                failures += 1
                watch.report(error)
                try? await Task.sleep(for: backoff.delay(afterFailures: failures) ?? .seconds(2))
              }
            }
          }
        case .probe(let generation, let endpoint, let key):
          guard let cluster, let heard = streams[generation]?.heard else { continue }
          Task {
            do throws(EtcdError) {
              _ = try await cluster.range(
                key, endpoint: endpoint, countOnly: true, timeout: cluster.attemptTimeout)
              heard.withLock { $0 = .now }
              feed.yield(.probeAnswered(generation, nil))
            } catch {
              feed.yield(.probeAnswered(generation, error))
            }
          }
        case .report(let error, let ids):
          for id in ids { handlers[id]?.report(error) }
        }
      }
    }
    for stream in streams.values { stream.task.cancel() }
  }

  /// The loop's reference to its cluster: weak, so that the cluster (which owns the hub) can
  /// go away while the loop waits.
  private final class WeakCluster: Sendable {
    weak let cluster: EtcdCluster?
    init(_ cluster: EtcdCluster) { self.cluster = cluster }
  }

  // MARK: One stream

  /// Opens stream `generation` on `endpoint` and reads it until it ends or is cancelled,
  /// while a monitor reports silence of `watchCheckInterval` (a stream that never answers
  /// included).
  private static func stream(
    cluster: EtcdCluster, generation: UInt64, endpoint: Int,
    creates: [EtcdWatchMachine.Create], heard: Cell<ContinuousClock.Instant>,
    feed: AsyncStream<Event>.Continuation
  ) async {
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        let error = await read(
          cluster: cluster, generation: generation, endpoint: endpoint, creates: creates,
          heard: heard, feed: feed)
        if !Task.isCancelled { feed.yield(.ended(generation, error)) }
      }
      group.addTask {
        let interval = cluster.watchCheckInterval
        while !Task.isCancelled {
          try? await Task.sleep(for: interval / 4)
          guard !Task.isCancelled else { return }
          let silent = heard.withLock { heard in
            guard ContinuousClock.now - heard >= interval else { return false }
            heard = .now
            return true
          }
          if silent { feed.yield(.silent(generation)) }
        }
      }
      await group.next()
      group.cancelAll()
    }
  }

  /// A stream's request body: one create request per line (the gateway makes one watch of
  /// each it reads, numbered in this order; see ``EtcdWatchMachine`` for why streams hold
  /// one).
  static func body(_ creates: [EtcdWatchMachine.Create]) -> Data {
    var body = Data()
    for create in creates {
      var request: EtcdWire.Object = [
        "key": EtcdWire.base64(create.key),
        "start_revision": EtcdWire.number(create.startRevision), "progress_notify": true,
      ]
      if let rangeEnd = create.rangeEnd { request["range_end"] = EtcdWire.base64(rangeEnd) }
      if !body.isEmpty { body.append(0x0A) }
      body.append(EtcdWire.data(["create_request": .object(request)]))
    }
    return body
  }

  private static func read(
    cluster: EtcdCluster, generation: UInt64, endpoint: Int,
    creates: [EtcdWatchMachine.Create], heard: Cell<ContinuousClock.Instant>,
    feed: AsyncStream<Event>.Continuation
  ) async -> EtcdError {
    var request = HTTPRequest(
      method: .post, url: cluster.endpoints[endpoint].appendingPathComponent("v3/watch"),
      headers: ["Content-Type": "application/json"], body: body(creates),
      timeout: cluster.timeout)
    if cluster.username != nil {
      do throws(EtcdError) {
        request.setHeader("Authorization", try await cluster.currentToken(endpoint: endpoint))
      } catch {
        return error
      }
    }
    let response: HTTPStreamingResponse
    do {
      response = try await cluster.http.streamingResponse(for: request)
    } catch {
      return .unavailable(reason: "\(error)")
    }
    guard response.status == 200 else {
      var body = Data()
      do {
        for try await chunk in response.body where body.count < 4096 { body.append(chunk) }
      } catch {}
      let failure = EtcdCluster.serverError(
        HTTPResponseMessage(status: response.status, body: body))
      if case .server(401, 16, _) = failure { cluster.forgetToken() }
      return failure
    }
    var decoder = EtcdWatchDecoder(limit: cluster.http.maximumResponseSize)
    do {
      for try await chunk in response.body {
        heard.withLock { $0 = .now }
        let messages = try decoder.feed(chunk)
        if !messages.isEmpty { feed.yield(.received(generation, messages)) }
      }
      return .unavailable(reason: "the watch stream ended")
    } catch let error as EtcdError {
      return error
    } catch {
      return .unavailable(reason: "\(error)")
    }
  }
}
