import TetherSupport

extension Publisher {
  /// Collects all received elements, and emits a single array of them when the upstream
  /// finishes.
  ///
  /// The array is unbounded: use it on publishers known to finish.
  public func collect() -> Publishers.Collect<Self> {
    Publishers.Collect(upstream: self)
  }

  /// Collects up to the given number of elements, and emits them as an array each time the
  /// buffer is full; a final partial array is emitted when the upstream finishes.
  ///
  /// Demand is per array: a subscriber that asks for two arrays makes the operator ask
  /// upstream for `2 * count` elements.
  public func collect(_ count: Int) -> Publishers.CollectByCount<Self> {
    Publishers.CollectByCount(upstream: self, count: count)
  }
}

extension Publishers {
  /// A publisher that buffers all elements and emits them as one array when upstream finishes.
  public struct Collect<Upstream: Publisher>: Publisher {
    /// Collect publishes one array of all the upstream's elements.
    public typealias Output = [Upstream.Output]
    /// Collect fails (dropping its buffer) when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream

    /// Creates a publisher that collects all of `upstream`'s elements.
    public init(upstream: Upstream) { self.upstream = upstream }

    /// Attaches the subscriber behind a buffering stage.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(CollectStage(downstream: subscriber, count: nil))
    }
  }

  /// A publisher that buffers a given number of elements and emits them as arrays.
  public struct CollectByCount<Upstream: Publisher>: Publisher {
    /// CollectByCount publishes arrays of the upstream's elements.
    public typealias Output = [Upstream.Output]
    /// CollectByCount fails (dropping its buffer) when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The number of elements per array (at least 1).
    public let count: Int

    /// Creates a publisher that collects `upstream`'s elements into arrays of `count`.
    public init(upstream: Upstream, count: Int) {
      self.upstream = upstream
      self.count = Swift.max(1, count)
    }

    /// Attaches the subscriber behind a buffering stage.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(CollectStage(downstream: subscriber, count: count))
    }
  }
}

/// The stage behind `collect()` (`count == nil`) and `collect(_:)`.
///
/// The buffer is touched only in `receive` calls, which the upstream serialises; `request`
/// and `cancel` go through `link`, a Mutex.
private final class CollectStage<Downstream: Subscriber, Element>: Subscriber, Subscription,
  @unchecked Sendable
where Downstream.Input == [Element] {
  // @unchecked: `buffer` is only touched in the serialised `receive` calls; `link` and
  // `askedUnlimited` are Mutexes.
  typealias Input = Element
  typealias Failure = Downstream.Failure

  private let downstream: Downstream
  private let count: Int?
  private let link = UpstreamLink()
  private let askedUnlimited = Lock(unchecked: false)
  private var buffer: [Element] = []

  init(downstream: Downstream, count: Int?) {
    self.downstream = downstream
    self.count = count
  }

  func receive(subscription: any Subscription) {
    guard link.attach(subscription) else { return }
    downstream.receive(subscription: self)
  }

  func receive(_ input: Element) -> Subscribers.Demand {
    guard !link.isTerminal else { return .none }
    buffer.append(input)
    guard let count, buffer.count == count else { return .none }
    let full = buffer
    buffer.removeAll(keepingCapacity: true)
    return downstream.receive(full) * count
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    guard link.finish() else { return }
    let rest = buffer
    buffer = []
    if case .finished = completion, !rest.isEmpty || count == nil {
      _ = downstream.receive(rest)
    }
    downstream.receive(completion: completion)
  }

  func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    if let count {
      link.request(demand * count)
    } else if !askedUnlimited.withLockUnchecked({ asked in
      defer { asked = true }; return asked
    }) {
      link.request(.unlimited)
    }
  }

  func cancel() { link.cancel() }
}
