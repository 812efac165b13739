import Foundation
import Streams
import Tether
import TetherSupport

/// The bounded buffer between a streamed body's socket and its consumer: backpressure.
///
/// The transport appends what it reads; once `highWater` bytes wait unread, ``append(_:)``
/// says "pause" and the transport stops reading the socket, so the kernel's buffers fill and
/// TCP slows the server down. When the consumer has taken enough that at most `lowWater`
/// bytes wait, `resume` runs and reading goes on. A fast server can therefore never grow a
/// slow consumer's memory beyond `highWater` plus one read.
///
/// One consumer at a time calls ``next()``; dropping the consumer side (``Reader``) or
/// cancelling its task ends the transfer.
package final class StreamBody: Sendable {
  private struct State {
    var chunks: [Data] = []
    var head = 0
    var buffered = 0
    var paused = false
    var end: HTTPError??
    var waiter: CheckedContinuation<Data?, any Error>?
    var cancelled = false
  }

  /// The default bound of unread bytes per stream.
  package static let defaultHighWater = 256 << 10

  let highWater: Int
  let lowWater: Int
  private let state = Lock(State())
  private let resume: @Sendable () -> Void
  private let cancel: @Sendable () -> Void

  /// - Parameters:
  ///   - resume: Called (from the consumer's thread) when a paused transfer may read again.
  ///   - cancel: Called once when the consumer goes away before the end.
  package init(
    highWater: Int = StreamBody.defaultHighWater, resume: @escaping @Sendable () -> Void,
    cancel: @escaping @Sendable () -> Void
  ) {
    self.highWater = max(1, highWater)
    lowWater = self.highWater / 4
    self.resume = resume
    self.cancel = cancel
  }

  // MARK: - The transport's side

  /// Hands `chunk` to the consumer; returns `true` when the transport should pause.
  package func append(_ chunk: Data) -> Bool {
    let (waiter, pause) = state.withLock {
      state -> (CheckedContinuation<Data?, any Error>?, Bool) in
      guard state.end == nil, !state.cancelled else { return (nil, false) }
      if let waiter = state.waiter {
        state.waiter = nil
        return (waiter, false)
      }
      state.chunks.append(chunk)
      state.buffered += chunk.count
      if state.buffered >= highWater {
        state.paused = true
        return (nil, true)
      }
      return (nil, false)
    }
    waiter?.resume(returning: chunk)
    return pause
  }

  /// Ends the body: normally (`nil`) or with `error`, after what is buffered.
  package func finish(_ error: HTTPError?) {
    let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
      guard state.end == nil else { return nil }
      state.end = .some(error)
      defer { state.waiter = nil }
      return state.waiter
    }
    if let error {
      waiter?.resume(throwing: error)
    } else {
      waiter?.resume(returning: nil)
    }
  }

  // MARK: - The consumer's side

  /// The next chunk, or `nil` at the end.
  ///
  /// - Throws: The transfer's ``HTTPError``, or `CancellationError` when the task is
  ///   cancelled (which ends the transfer).
  func next() async throws -> Data? {
    while true {
      if let step = try takeBuffered() { return step }
      let chunk = try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
          let immediate = state.withLock { state -> Result<Data?, any Error>? in
            if state.cancelled { return .failure(CancellationError()) }
            if state.head < state.chunks.count || state.end != nil {
              // Something arrived between the two locks: an empty chunk means "look again".
              return .success(Data())
            }
            state.waiter = continuation
            return nil
          }
          if let immediate { continuation.resume(with: immediate) }
        }
      } onCancel: {
        consumerGone()
      }
      guard let chunk else { return nil }
      if !chunk.isEmpty { return chunk }
    }
  }

  /// A buffered chunk (`.some(chunk)`), the end (`.some(nil)` or a throw), or `nil` when the
  /// consumer must wait.
  private func takeBuffered() throws -> Data?? {
    enum Step {
      case chunk(Data, resume: Bool)
      case end(HTTPError?)
      case wait
    }
    let step = state.withLock { state -> Step in
      if state.head < state.chunks.count {
        let chunk = state.chunks[state.head]
        state.head += 1
        if state.head == state.chunks.count {
          state.chunks.removeAll(keepingCapacity: true)
          state.head = 0
        }
        state.buffered -= chunk.count
        var mustResume = false
        if state.paused, state.buffered <= lowWater {
          state.paused = false
          mustResume = true
        }
        return .chunk(chunk, resume: mustResume)
      }
      if let end = state.end { return .end(end) }
      return .wait
    }
    switch step {
    case .chunk(let chunk, let mustResume):
      if mustResume { resume() }
      return .some(chunk)
    case .end(let error):
      if let error { throw error }
      return .some(nil)
    case .wait:
      return nil
    }
  }

  /// The consumer stopped: the transfer ends and nothing more is buffered.
  package func consumerGone() {
    let (waiter, mustCancel) = state.withLock {
      state -> (CheckedContinuation<Data?, any Error>?, Bool) in
      guard !state.cancelled else { return (nil, false) }
      state.cancelled = true
      state.chunks = []
      state.head = 0
      state.buffered = 0
      defer { state.waiter = nil }
      return (state.waiter, state.end == nil)
    }
    waiter?.resume(throwing: CancellationError())
    if mustCancel { cancel() }
  }

  /// The body as an `AsyncThrowingStream` that pulls one chunk each time its consumer asks:
  /// dropping the stream, or cancelling the task iterating it, ends the transfer.
  func stream() -> AsyncThrowingStream<Data, any Error> {
    let reader = Reader(self)
    return AsyncThrowingStream { try await reader.body.next() }
  }

  /// The consumer's handle: when the last reference to it goes, the transfer ends.
  final class Reader: Sendable {
    let body: StreamBody
    init(_ body: StreamBody) { self.body = body }
    deinit { body.consumerGone() }
  }
}
