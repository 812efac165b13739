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

/// Something an ``EventLoop`` reports readiness to. Called on the loop's thread only.
protocol EventLoopHandler: AnyObject {
  func handleReadiness(readable: Bool, writable: Bool)
}

/// One I/O thread: it waits for every socket registered with it at once (``Poller``), runs
/// the timers that are due, and runs work handed to it from other threads.
///
/// Everything an engine object owns (a connection, a pool, a stream's socket) lives on one
/// loop and is touched only there, so none of it needs a lock; other threads reach it with
/// ``execute(_:)``. No work on a loop ever blocks: sockets are non-blocking, name resolution
/// runs on the ``Resolver``'s thread, and user code is never called here (continuations are
/// resumed, which only schedules the waiting task).
///
/// Loops come from ``EventLoopGroup/shared``: a small fixed set of threads for the whole
/// process, whatever the number of requests and streams.
final class EventLoop: @unchecked Sendable {
  // @unchecked Sendable: `inbox` and `threadID` are `Lock`s; every other stored property is
  // touched only on `thread`, the loop itself.
  private let inbox = Lock(Inbox())
  private let poller: Poller
  private let waker: Waker
  private var handlers: [UInt64: any EventLoopHandler] = [:]
  private var nextToken: UInt64 = 1
  private var timers = TimerQueue()
  private let threadID = Lock<pthread_t?>(nil)
  let name: String
  /// The buffer every socket on this loop reads into, one read at a time (loop thread only).
  /// Loops live as long as the process, so it is never freed.
  let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
  /// Polls of the sockets so far, counted as each returns (loop thread only).
  private(set) var polls: UInt64 = 0
  /// Polls whose every readiness report has been handled (loop thread only): once it reaches
  /// `n`, whatever input a socket watched for reading held when poll `n` began has been seen
  /// by its handler. A connection uses it to know its idle socket is quiet without asking
  /// the kernel again.
  private(set) var handledPolls: UInt64 = 0

  init(name: String) throws(EngineFailure) {
    self.name = name
    poller = try Poller()
    waker = try Waker(edgeTriggered: poller.canTriggerOnEdges)
    let thread = Thread { [self] in run() }
    thread.name = name
    thread.stackSize = 1 << 20
    thread.start()
  }

  /// Whether the caller runs on this loop's thread.
  var inLoop: Bool {
    guard let id = threadID.withLock({ $0 }) else { return false }
    return pthread_equal(id, pthread_self()) != 0
  }

  /// Runs `work` on the loop's thread, after what is already queued.
  func execute(_ work: @escaping @Sendable () -> Void) {
    let mustWake = inbox.withLock { inbox -> Bool in
      inbox.work.append(work)
      defer { inbox.wakePending = true }
      return !inbox.wakePending
    }
    if mustWake { waker.wake() }
  }

  // MARK: - Registrations (loop thread only)

  /// Registers `handler` for `descriptor`'s readiness; returns the token that names it.
  func register(_ descriptor: Int32, _ handler: any EventLoopHandler) -> UInt64 {
    let token = nextToken
    nextToken += 1
    handlers[token] = handler
    return token
  }

  /// Sets what `descriptor` (registered as `token`) waits for.
  func setInterest(_ descriptor: Int32, token: UInt64, read: Bool, write: Bool) {
    poller.set(descriptor, token: token, read: read, write: write)
  }

  /// Forgets `descriptor` before it is closed.
  func deregister(_ descriptor: Int32, token: UInt64) {
    poller.remove(descriptor)
    handlers[token] = nil
  }

  // MARK: - Timers (loop thread only)

  /// Runs `work` on the loop at `deadline` (monotonic nanoseconds, see ``Monotonic``) unless
  /// cancelled first.
  @discardableResult
  func schedule(at deadline: UInt64, _ work: @escaping () -> Void) -> TimerID {
    timers.schedule(at: deadline, work)
  }

  /// Cancels a timer; nothing happens if it ran already.
  func cancel(_ timer: TimerID?) {
    if let timer { timers.cancel(timer) }
  }

  // MARK: - The loop

  private func run() {
    threadID.withLock { $0 = pthread_self() }
    // Foundation names a Thread for itself only; the kernel's name is what `top`, `perf` and
    // /proc show.
    KernelThreadName.set(name)
    let wakeToken: UInt64 = 0
    poller.set(
      waker.descriptor, token: wakeToken, read: true, write: false,
      edgeTriggered: waker.isEdgeTriggered)
    var events: [PollerEvent] = []
    events.reserveCapacity(256)
    var taken: [@Sendable () -> Void] = []
    while true {
      var timeout: Int32 = -1
      if let next = timers.nextDeadline {
        let now = Monotonic.now
        timeout = next <= now ? 0 : Int32(clamping: (next - now + 999_999) / 1_000_000)
      }
      events.removeAll(keepingCapacity: true)
      poller.wait(timeout: timeout, into: &events)
      polls += 1
      for event in events {
        if event.token == wakeToken {
          // Consume the wake-up before clearing the flag: a producer that still sees the flag
          // set knows its work is taken below, one that sees it clear wakes the loop again.
          waker.drain()
          inbox.withLock { $0.wakePending = false }
          continue
        }
        // A handler removed by an earlier event of this batch gets nothing more.
        handlers[event.token]?.handleReadiness(
          readable: event.readable, writable: event.writable)
      }
      handledPolls = polls
      // Taken out first: a timer's work may schedule another timer.
      for work in timers.takeDue(now: Monotonic.now) { work() }
      // The inbox's array and `taken` trade places: no copy, no new array.
      inbox.withLock { swap(&$0.work, &taken) }
      for item in taken { item() }
      taken.removeAll(keepingCapacity: true)
    }
  }
}

/// What other threads hand a loop: work to run, and whether a wake-up byte is already on
/// its way (one lock for both, taken once per ``EventLoop/execute(_:)``).
private struct Inbox {
  var work: [@Sendable () -> Void] = []
  var wakePending = false
}

/// A process's I/O threads. Each new pool or stream takes the next loop in turn.
final class EventLoopGroup: Sendable {
  let loops: [EventLoop]
  private let next = Lock(0)

  /// The loops every ``HTTPClient`` shares: two threads (one on a single-core machine),
  /// started the first time a request needs them.
  static let shared: EventLoopGroup? = try? EventLoopGroup(
    count: min(2, max(1, ProcessInfo.processInfo.activeProcessorCount)))

  init(count: Int) throws(EngineFailure) {
    var loops: [EventLoop] = []
    for index in 0..<count { loops.append(try EventLoop(name: "Tether I/O \(index)")) }
    self.loops = loops
  }

  /// Every loop, starting with the next one in turn.
  func loopsInTurn() -> [EventLoop] {
    let first = nextIndex()
    return Array(loops[first...] + loops[..<first])
  }

  /// The next loop in turn.
  func nextLoop() -> EventLoop { loops[nextIndex()] }

  private func nextIndex() -> Int {
    next.withLock { next -> Int in
      defer { next = (next + 1) % loops.count }
      return next
    }
  }
}

/// Monotonic time in nanoseconds, the engine's clock for deadlines.
enum Monotonic {
  static var now: UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  /// `now` plus `seconds`, clamped (an infinite or huge timeout is "in about 30 years").
  static func deadline(after seconds: Double) -> UInt64 {
    let clamped = seconds.isFinite ? min(max(0, seconds), 1e9) : 1e9
    return now + UInt64(clamped * 1e9)
  }
}

/// Names one scheduled timer.
struct TimerID: Hashable {
  let value: UInt64
}

/// The loop's timers: a binary heap by deadline; cancelled timers are dropped when they come
/// up.
struct TimerQueue {
  private var heap: [(deadline: UInt64, id: UInt64)] = []
  private var work: [UInt64: () -> Void] = [:]
  private var nextID: UInt64 = 1

  /// Entries in the heap, cancelled ones included: what the queue's memory holds.
  var storedCount: Int { heap.count }

  var nextDeadline: UInt64? {
    // Cancelled entries at the top would wake the loop early; that only costs a wake-up.
    heap.first?.deadline
  }

  mutating func schedule(at deadline: UInt64, _ body: @escaping () -> Void) -> TimerID {
    let id = nextID
    nextID += 1
    work[id] = body
    heap.append((deadline, id))
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].deadline < heap[parent].deadline else { break }
      heap.swapAt(child, parent)
      child = parent
    }
    return TimerID(value: id)
  }

  mutating func cancel(_ timer: TimerID) {
    work[timer.value] = nil
    if work.isEmpty {
      heap.removeAll(keepingCapacity: true)
    } else if heap.count > 64, heap.count > 4 * work.count {
      // Cancelled entries stay in the heap until their deadline: a busy client cancels a
      // request's deadline timer on every answer, and would otherwise keep one entry per
      // request of the last `timeout` seconds. Rebuilt when most entries are dead, the heap
      // stays within a few times the live timers, at an amortized constant cost.
      heap.removeAll { work[$0.id] == nil }
      for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }
  }

  /// The work of every timer due at `now`, in deadline order, removed from the queue.
  mutating func takeDue(now: UInt64) -> [() -> Void] {
    var due: [() -> Void] = []
    while let top = heap.first, top.deadline <= now {
      popTop()
      if let body = work.removeValue(forKey: top.id) { due.append(body) }
    }
    return due
  }

  private mutating func popTop() {
    let last = heap.removeLast()
    guard !heap.isEmpty else { return }
    heap[0] = last
    siftDown(0)
  }

  private mutating func siftDown(_ start: Int) {
    var parent = start
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
      if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
      guard smallest != parent else { return }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
  }
}
