extension Publishers {
  /// A publisher that republishes its upstream's elements and, when the upstream completes,
  /// decides what follows: the completion itself, one last element, or another publisher's
  /// elements. The one type behind ``Publishers/Catch``, ``Publishers/ReplaceError`` and
  /// ``Publishers/Concatenate``.
  ///
  /// A final element or the next publisher is asked for the demand the subscriber still had
  /// outstanding, so nothing is delivered beyond demand; the next publisher is not made at
  /// all if the subscriber cancelled first.
  public struct CompletionHandoff<Upstream: Publisher, Next: Publisher>: Publisher
  where Upstream.Output == Next.Output {
    /// The operator publishes the upstream's elements, then the next publisher's.
    public typealias Output = Upstream.Output
    /// The operator fails with the next publisher's failure type.
    public typealias Failure = Next.Failure

    /// The publisher from which this publisher receives elements first.
    public let upstream: Upstream
    /// Decides, once, what follows the upstream's completion.
    @usableFromInline let handoff: (Subscribers.Completion<Upstream.Failure>) -> Handoff

    /// What follows the upstream's completion.
    @usableFromInline enum Handoff {
      /// Completes the stream.
      case finish(Subscribers.Completion<Next.Failure>)
      /// Publishes one last element when the subscriber has demand for it, then finishes.
      case finishWith(Output)
      /// Subscribes to the publisher the closure makes and republishes it.
      case continueWith(() -> Next)
    }

    @inlinable init(
      upstream: Upstream,
      handoff: @escaping (Subscribers.Completion<Upstream.Failure>) -> Handoff
    ) {
      self.upstream = upstream
      self.handoff = handoff
    }

    /// Attaches the subscriber to the upstream, then to what follows its completion.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let handoff = handoff
      upstream.subscribe(
        RelayStage(relay: DemandRelay(downstream: subscriber)) { completion, relay in
          switch handoff(completion) {
          case .finish(let completion): relay.finish(completion)
          case .finishWith(let output): relay.finish(with: output)
          case .continueWith(let next): relay.continueWith(next)
          }
        })
    }
  }
}
