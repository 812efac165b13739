import Foundation
import Streams
import Tether
import TetherSupport

/// Whether a config has answered its keys for the first time: what `.remoteConfig` holders
/// show as `isLoading` and `loadError`.
enum FirstAnswer: Sendable, Equatable {
  /// A source is set and nothing has answered yet: no cache was read, nothing activated, no
  /// fetch finished (or what one fetched waits for ``RemoteConfig/activate()``).
  case waiting
  /// The config has values to show: from the cache, an activation, or only its defaults when
  /// it has no source (nothing will fetch) or the source had nothing new.
  case ready
  /// The last fetch failed and the config has nothing but its defaults.
  case failed(RemoteConfigError)
}

extension RemoteConfig {
  /// The config's answer in `state`.
  static func firstAnswer(_ state: State) -> FirstAnswer {
    if state.active.version != nil || !state.active.entries.isEmpty { return .ready }
    guard state.source != nil else { return .ready }
    if state.fetched != nil { return .waiting }
    switch state.lastFetchStatus {
    case .noFetchYet: return .waiting
    case .failure, .throttled: return .failed(state.lastError ?? .notConfigured)
    case .success, .cached: return .ready
    }
  }

  /// Queues `.answered` for the observers when the answer changed. Call with the state locked,
  /// in the critical section that changed it, then `deliver()`.
  func noteAnswer(in state: inout State) {
    let answer = Self.firstAnswer(state)
    guard answer != state.announcedAnswer else { return }
    state.announcedAnswer = answer
    enqueue(.answered(answer), in: &state)
  }

  /// Calls `handle` once, with the first answer that is not `.waiting`: at once when the
  /// config has answered already, otherwise when it does (on the thread that made it answer).
  func whenAnswered(_ handle: @escaping @Sendable (FirstAnswer) -> Void) {
    let now = state.withLock { Self.firstAnswer($0) }
    guard now == .waiting else { return handle(now) }
    let pending = Lock<(@Sendable (FirstAnswer) -> Void)?>(handle)
    // The observer keeps itself registered until it has answered (the token is released then).
    let registration = Lock<AnyCancellable?>(nil)
    let observer = addObserver(names: []) { [weak self] event in
      let answer: FirstAnswer
      switch event {
      case .registered:
        // The answer may have come between the check above and the registration.
        guard let self else { return }
        answer = self.state.withLock { Self.firstAnswer($0) }
      case .answered(let next): answer = next
      case .changed: return
      }
      guard answer != .waiting, let handle = pending.withLock({ $0.take() }) else { return }
      registration.withLock { $0.take() }?.cancel()
      handle(answer)
    }
    if pending.withLock({ $0 == nil }) {
      observer.cancel()
    } else {
      registration.withLock { $0 = observer }
    }
  }

  /// Calls `handle` with each answer the config gives after now (never `.waiting`).
  func answers(_ handle: @escaping @Sendable (FirstAnswer) -> Void) -> AnyCancellable {
    addObserver(names: []) { event in
      guard case .answered(let answer) = event, answer != .waiting else { return }
      handle(answer)
    }
  }
}
