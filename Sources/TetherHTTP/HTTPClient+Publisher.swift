import Foundation
import Streams
import TetherSupport

extension HTTPClient {
  /// A publisher that sends `endpoint` with `parameters` and `body` when a subscriber asks for a
  /// value, publishes the decoded response once, then finishes (CombineMoya's
  /// `requestPublisher`, for any endpoint).
  ///
  /// ```swift
  /// import Streams
  /// import TetherHTTP
  ///
  /// let cancellable = api.publisher(for: GitHub.repos, UserRepos(user: "apple"))
  ///   .map(\.count)
  ///   .sink(receiveCompletion: { print($0) }, receiveValue: { print($0, "repos") })
  /// ```
  ///
  /// - Each subscriber makes its own request, at its first demand, with everything
  ///   ``send(_:_:body:headers:)`` does (interceptors, retries, limits).
  /// - The failure is the ``HTTPError`` `send` would throw.
  /// - Cancelling the subscription cancels the request in flight; nothing is delivered after.
  /// - Values and the completion arrive on a task of Swift's concurrency pool; use
  ///   `receive(on:)` to move them.
  public func publisher<Parameters, Body, Response>(
    for endpoint: Endpoint<Parameters, Body, Response>, _ parameters: Parameters, body: Body,
    headers: [String: String] = [:]
  ) -> HTTPCallPublisher<Response> {
    HTTPCallPublisher { [self] () async throws(HTTPError) -> Response in
      try await send(endpoint, parameters, body: body, headers: headers)
    }
  }

  /// A publisher of a body-less `endpoint` (a `GET` or `DELETE`) with `parameters`; see
  /// ``publisher(for:_:body:headers:)``.
  public func publisher<Parameters, Response>(
    for endpoint: Endpoint<Parameters, NoBody, Response>, _ parameters: Parameters,
    headers: [String: String] = [:]
  ) -> HTTPCallPublisher<Response> {
    publisher(for: endpoint, parameters, body: NoBody(), headers: headers)
  }

  /// A publisher of a body-less `endpoint` that takes no parameters; see
  /// ``publisher(for:_:body:headers:)``.
  public func publisher<Response>(
    for endpoint: Endpoint<NoParameters, NoBody, Response>, headers: [String: String] = [:]
  ) -> HTTPCallPublisher<Response> {
    publisher(for: endpoint, NoParameters(), body: NoBody(), headers: headers)
  }

  /// A publisher of an `endpoint` that takes no parameters, with `body`; see
  /// ``publisher(for:_:body:headers:)``.
  public func publisher<Body, Response>(
    for endpoint: Endpoint<NoParameters, Body, Response>, body: Body,
    headers: [String: String] = [:]
  ) -> HTTPCallPublisher<Response> {
    publisher(for: endpoint, NoParameters(), body: body, headers: headers)
  }
}

/// The publisher of ``HTTPClient/publisher(for:_:body:headers:)``: one call per subscriber, made
/// at its first demand; one value, then `.finished`, or an ``HTTPError``.
public struct HTTPCallPublisher<Output: Sendable>: Publisher, Sendable {
  /// The call's error.
  public typealias Failure = HTTPError

  let call: @Sendable () async throws(HTTPError) -> Output

  /// A publisher that runs `call` for each subscriber, at its first demand.
  public init(_ call: @escaping @Sendable () async throws(HTTPError) -> Output) {
    self.call = call
  }

  /// Attaches `subscriber`; its call starts at its first demand.
  public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
    subscriber.receive(subscription: HTTPCallSubscription(call: call, downstream: subscriber))
  }
}

/// What a call's task hands its result to.
private protocol HTTPCallDelivering<Output>: AnyObject, Sendable {
  associatedtype Output
  func deliver(_ result: Result<Output, HTTPError>)
}

/// One subscriber's call: a task started at the first demand, cancelled with the subscription.
private final class HTTPCallSubscription<Output: Sendable, Downstream: Subscriber>: Subscription,
  HTTPCallDelivering, @unchecked Sendable
where Downstream.Input == Output, Downstream.Failure == HTTPError {
  // @unchecked Sendable: `downstream` and `task` live in `state` (a Lock, taken with
  // `withLockUnchecked` because the subscriber need not be Sendable); `call` is immutable.
  private struct State {
    var downstream: Downstream?
    var task: Task<Void, Never>?
    var started = false
  }

  private let call: @Sendable () async throws(HTTPError) -> Output
  private let state: Lock<State>

  init(call: @escaping @Sendable () async throws(HTTPError) -> Output, downstream: Downstream) {
    self.call = call
    state = Lock(unchecked: State(downstream: downstream))
  }

  func request(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    let start = state.withLockUnchecked { state -> Bool in
      guard state.downstream != nil, !state.started else { return false }
      state.started = true
      return true
    }
    guard start else { return }
    // The task captures the subscription as an existential, not the subscriber's metatype
    // (not `Sendable`; Swift 6.2's `SendableMetatype` checking warns about it).
    let (call, target) = (call, self as any HTTPCallDelivering<Output>)
    let task = Task {
      let result: Result<Output, HTTPError>
      do throws(HTTPError) {
        result = .success(try await call())
      } catch {
        result = .failure(error)
      }
      target.deliver(result)
    }
    // A cancel that came while the task was being made finds no task: cancel it here.
    let cancelled = state.withLockUnchecked { state -> Bool in
      guard state.downstream != nil else { return true }
      state.task = task
      return false
    }
    if cancelled { task.cancel() }
  }

  func deliver(_ result: Result<Output, HTTPError>) {
    let downstream = state.withLockUnchecked { state -> Downstream? in
      defer {
        state.downstream = nil
        state.task = nil
      }
      return state.downstream
    }
    guard let downstream else { return }
    switch result {
    case .success(let value):
      _ = downstream.receive(value)
      downstream.receive(completion: .finished)
    case .failure(let error):
      downstream.receive(completion: .failure(error))
    }
  }

  func cancel() {
    let task = state.withLockUnchecked { state -> Task<Void, Never>? in
      state.downstream = nil
      defer { state.task = nil }
      return state.task
    }
    task?.cancel()
  }
}
