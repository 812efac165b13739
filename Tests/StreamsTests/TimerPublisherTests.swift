import Foundation
import Streams
import TestSupport
import Testing

@Suite struct TimerPublisherTests {
  /// Runs `body` on a thread of its own whose run loop runs until `done` or a deadline.
  func onRunLoopThread(
    until done: @escaping @Sendable () -> Bool,
    _ body: @escaping @Sendable (RunLoop) -> AnyCancellable
  ) async {
    await onDedicatedThread {
      let cancellable = body(RunLoop.current)
      let deadline = Date().addingTimeInterval(10)
      while !done(), Date() < deadline {
        _ = RunLoop.current.run(mode: .default, before: Date().addingTimeInterval(0.05))
      }
      cancellable.cancel()
    }
  }

  @Test func autoconnectedTimerTicksOnARealRunLoop() async throws {
    let ticks = Guarded<[Date]>([])
    await onRunLoopThread(until: { ticks.withLock { $0.count } >= 3 }) { runLoop in
      Timer.publish(every: 0.01, on: runLoop, in: .default).autoconnect()
        .sink { date in ticks.withLock { $0.append(date) } }
    }
    let dates = ticks.withLock { $0 }
    #expect(dates.count >= 3)
    #expect(zip(dates, dates.dropFirst()).allSatisfy { $0 <= $1 })
  }

  @Test func nothingTicksBeforeConnect() async throws {
    let ticks = Guarded(0)
    let connected = Guarded(false)
    await onRunLoopThread(until: { ticks.withLock { $0 } >= 2 }) { runLoop in
      let publisher = Timer.publish(every: 0.01, on: runLoop, in: .default)
      let sink = publisher.sink { _ in
        #expect(connected.withLock { $0 })
        ticks.withLock { $0 += 1 }
      }
      // Let the run loop spin once with nothing connected.
      _ = runLoop.run(mode: .default, before: Date().addingTimeInterval(0.03))
      #expect(ticks.withLock { $0 } == 0)
      connected.withLock { $0 = true }
      let connection = publisher.connect()
      return AnyCancellable {
        connection.cancel()
        sink.cancel()
      }
    }
    #expect(ticks.withLock { $0 } >= 2)
  }
}
