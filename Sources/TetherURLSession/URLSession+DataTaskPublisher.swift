import Foundation
import Streams
import TetherSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
  /// A publisher that runs a data task for `url` when a subscriber demands a value, and
  /// publishes the data and response once (Combine's spelling, on every platform).
  public func dataTaskPublisher(for url: URL) -> DataTaskPublisher {
    DataTaskPublisher(request: URLRequest(url: url), session: self)
  }

  /// A publisher that runs a data task for `request` when a subscriber demands a value.
  ///
  /// ```swift
  /// let cancellable = URLSession.shared.dataTaskPublisher(for: url)
  ///   .map(\.data)
  ///   .sink(receiveCompletion: { print($0) }, receiveValue: { print($0.count) })
  /// ```
  ///
  /// Cancelling the subscription cancels the task. The task's own limits apply (no size
  /// limit); use ``HTTPClient`` for hardened requests.
  public func dataTaskPublisher(for request: URLRequest) -> DataTaskPublisher {
    DataTaskPublisher(request: request, session: self)
  }

  /// The publisher of `dataTaskPublisher(for:)`: one `(data, response)` value, then
  /// `.finished`; or a `URLError`.
  public struct DataTaskPublisher: Publisher, Sendable {
    /// The data and the response of the task.
    public typealias Output = (data: Data, response: URLResponse)
    /// The task's error.
    public typealias Failure = URLError

    /// The request the task sends.
    public let request: URLRequest
    /// The session that runs the task.
    public let session: URLSession

    /// Creates a publisher for `request` on `session`.
    public init(request: URLRequest, session: URLSession) {
      self.request = request
      self.session = session
    }

    /// Attaches `subscriber`; the task starts on its first demand.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let subscription = DataTaskSubscription(
        request: request, session: session, downstream: subscriber)
      subscriber.receive(subscription: subscription)
    }
  }
}

/// What a data task's completion handler calls. The handler captures the subscription as this
/// existential, so it does not capture the subscriber's metatype (not `Sendable`; Swift 6.2's
/// `SendableMetatype` checking warns about it).
private protocol DataTaskCompleting: AnyObject, Sendable {
  func complete(data: Data?, response: URLResponse?, error: (any Error)?)
}

private func dataTaskCompletion(
  calling target: any DataTaskCompleting
) -> @Sendable (Data?, URLResponse?, (any Error)?) -> Void {
  { [weak target] data, response, error in
    target?.complete(data: data, response: response, error: error)
  }
}

private final class DataTaskSubscription<Downstream: Subscriber>: Subscription,
  DataTaskCompleting, @unchecked Sendable
where Downstream.Input == URLSession.DataTaskPublisher.Output, Downstream.Failure == URLError {
  // @unchecked: `downstream` and `task` live in `state`, a `Lock`; `request` and `session` are
  // immutable.
  // @unchecked Sendable: a State is only created here and then only touched inside `state`'s
  // `Lock`.
  private struct State: @unchecked Sendable {
    var downstream: Downstream?
    var task: URLSessionDataTask?
  }

  private let request: URLRequest
  private let session: URLSession
  private let state: Lock<State>

  init(request: URLRequest, session: URLSession, downstream: Downstream) {
    self.request = request
    self.session = session
    state = Lock(State(downstream: downstream))
  }

  func request(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    let task = session.dataTask(
      with: request, completionHandler: dataTaskCompletion(calling: self))
    let start = state.withLock { state -> Bool in
      guard state.downstream != nil, state.task == nil else { return false }
      state.task = task
      return true
    }
    if start { task.resume() }
  }

  func complete(data: Data?, response: URLResponse?, error: (any Error)?) {
    guard
      let downstream = state.withLock({ state -> Downstream? in
        defer { state.downstream = nil }
        return state.downstream
      })
    else { return }
    if let error {
      downstream.receive(completion: .failure((error as? URLError) ?? URLError(.unknown)))
    } else if let response {
      _ = downstream.receive((data ?? Data(), response))
      downstream.receive(completion: .finished)
    } else {
      downstream.receive(completion: .failure(URLError(.badServerResponse)))
    }
  }

  func cancel() {
    let task = state.withLock { state -> URLSessionDataTask? in
      state.downstream = nil
      return state.task
    }
    task?.cancel()
  }
}
