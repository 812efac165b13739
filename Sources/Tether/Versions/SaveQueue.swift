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

  /// Whether the key may hold a save back for a throttle window (see `ThrottledSaveKey`).
  let throttles: Bool
  /// Someone waits for the change queued behind the save in flight (a `save()`, an `update`):
  /// the key is asked to write the save in flight at once if it holds it back for a throttle
  /// window, also when the save reaches the key only after the ask.
  var flushWanted = false
  /// The save in flight's successor, for a change still waiting when the reference goes away.
  var successor: SaveSuccessor?

  init(stored: SharedVersion?, throttles: Bool) {
    engine = VersionEngine(stored: stored)
    self.throttles = throttles
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
  /// Someone waits for it: once made, a throttled key writes it at once (`flushWanted`).
  var urgent = false
}

/// Who waits for a save's outcome, with the conflict if the key refused it.
@usableFromInline typealias SaveCompletion = @Sendable (Versioned<Result<Void, any Error>>) -> Void
