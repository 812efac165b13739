import TetherSupport

extension Publisher {
  /// Prints log messages for every publisher event, for debugging.
  ///
  /// Each line reads like Combine's: `receive subscription: (…)`, `request unlimited`,
  /// `request max: (3)`, `receive value: (…)`, `receive finished`, `receive error: (…)`,
  /// `receive cancel`, preceded by `prefix: ` when a prefix is given. Lines go to `stream`,
  /// or to standard output when it is `nil`; writes to one stream are serialised.
  ///
  /// ```swift
  /// subject.print("search").sink { _ in }
  /// // search: receive subscription: (PassthroughSubject)
  /// // search: request unlimited
  /// ```
  public func print(
    _ prefix: String = "", to stream: (any TextOutputStream)? = nil
  ) -> Publishers.Print<Self> {
    Publishers.Print(upstream: self, prefix: prefix, to: stream)
  }
}

extension Publishers {
  /// A publisher that prints log messages for all publishing events.
  public struct Print<Upstream: Publisher>: Publisher {
    /// Print publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// Print fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The string that begins each line.
    public let prefix: String
    let log: PrintLog

    /// Creates a publisher that prints `upstream`'s events to `stream` (`nil`: standard
    /// output).
    public init(upstream: Upstream, prefix: String, to stream: (any TextOutputStream)? = nil) {
      self.upstream = upstream
      self.prefix = prefix
      log = PrintLog(prefix: prefix, stream: stream)
    }

    /// Attaches the subscriber behind a stage that logs every event.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let log = log
      upstream.handleEvents(
        receiveSubscription: { log.write("receive subscription: (\(type(of: $0)))") },
        receiveOutput: { log.write("receive value: (\($0))") },
        receiveCompletion: { completion in
          switch completion {
          case .finished: log.write("receive finished")
          case .failure(let error): log.write("receive error: (\(error))")
          }
        },
        receiveCancel: { log.write("receive cancel") },
        receiveRequest: { demand in
          if let max = demand.max {
            log.write("request max: (\(max))")
          } else {
            log.write("request unlimited")
          }
        }
      ).subscribe(subscriber)
    }
  }
}

/// Where `print(_:to:)` writes: the stream, behind a lock because events of one subscription
/// come from several threads (values from upstream, `request` and `cancel` from the
/// subscriber's).
final class PrintLog: Sendable {
  private let prefix: String
  /// The one place a lock is held while calling out: `write(_:)` must be exclusive for a
  /// stream that is not thread-safe, and a `TextOutputStream` has no way to call back into
  /// the publisher.
  private let stream: Lock<(any TextOutputStream)?>

  init(prefix: String, stream: (any TextOutputStream)?) {
    self.prefix = prefix
    self.stream = Lock(unchecked: stream)
  }

  func write(_ message: String) {
    let line = prefix.isEmpty ? message : "\(prefix): \(message)"
    stream.withLockUnchecked { stream in
      if stream == nil {
        Swift.print(line)
      } else {
        stream!.write(line + "\n")
      }
    }
  }
}
