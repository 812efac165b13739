import TetherSupport

/// A reference's side of the version engine: the engine itself, the coalesced change waiting
/// for the save in flight, and the value delivered while that save was in flight.
///
/// Made only for references whose value lives in a key (an in-memory value never saves, and
/// stays one allocation size smaller). A class kept in the reference's `State`: it is read and
/// changed only under the reference's lock, so it needs no lock of its own, and it never
/// leaves the critical section (what is needed outside is copied out).
final class SaveQueue<Value: Sendable> {
  /// The decisions (see `VersionEngine`).
  var engine: VersionEngine
  /// The coalesced change waiting for the save in flight (the engine has its basis).
  var pending: PendingSave<Value>?
  /// The newest value delivered while a save was in flight (the engine has its version):
  /// `nil` inside for a load that found nothing, which changes no value.
  var held: Value??
  /// Where the coalesced change goes if the reference goes away with a save in flight.
  let handoff = SaveHandoff<Value>()

  init(stored: SharedVersion?) {
    engine = VersionEngine(stored: stored)
  }
}

/// A save waiting for the one in flight: the newest value, and everyone waiting for it.
struct PendingSave<Value: Sendable>: Sendable {
  var value: Value
  /// `.userInitiated` if any save it stands for was (a `save()` is not delayed by a throttle).
  var context: SaveContext
  /// The newest save sequence it stands for (see `finishSave`).
  var sequence: UInt64
  /// The `save()` and `update` calls waiting for its outcome.
  var completions: [SaveCompletion]
}

/// Who waits for a save's outcome, with the conflict if the key refused it.
@usableFromInline typealias SaveCompletion = @Sendable (Versioned<Result<Void, any Error>>) -> Void

/// How the coalesced change of a reference that went away reaches its key: the save in flight
/// makes it when it ends (a pending change is never lost because its holders were released).
///
/// The reference's `deinit` leaves the change here; the end of the save in flight, finding its
/// reference gone, takes it. Whichever of the two comes second makes the save.
final class SaveHandoff<Value: Sendable>: Sendable {
  private enum Stage {
    case open
    /// The save in flight ended after its reference went away, and it left this condition
    /// for the change (`nil` outside: the change was derived from a refused save; drop it).
    case ended(SharedVersion??)
    /// The reference went away, leaving this change and the condition it had then.
    case orphaned(PendingSave<Value>, condition: SharedVersion?)
  }
  private let stage = Lock<Stage>(.open)

  /// The reference is going away with `pending` waiting: returns it, with its condition, if the
  /// save in flight already ended (the caller makes it now), else keeps it for that end.
  func orphan(
    _ pending: PendingSave<Value>, condition: SharedVersion?
  ) -> (
    PendingSave<Value>, SharedVersion?
  )? {
    stage.withLock { stage in
      guard case .ended(let ended) = stage else {
        stage = .orphaned(pending, condition: condition)
        return nil
      }
      stage = .open
      guard let ended else { return nil }
      return (pending, ended ?? condition)
    }
  }

  /// The save in flight ended as `end` with its reference gone: the orphaned change to save
  /// now, with its condition, if the reference left one.
  func ended(_ end: VersionEngine.SaveEnd) -> (PendingSave<Value>, SharedVersion?)? {
    let next: SharedVersion??
    switch end {
    case .saved(let written): next = .some(written)
    case .failed: next = .some(nil)
    case .refused: next = nil
    }
    return stage.withLock { stage in
      guard case .orphaned(let pending, let condition) = stage else {
        stage = .ended(next)
        return nil
      }
      stage = .open
      guard let next else { return nil }
      return (pending, next ?? condition)
    }
  }
}
