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

  /// Whether saves go to the key at once (see `PipelinedSaveKey`); the engine still decides
  /// what each is derived from and which deliveries to take.
  let pipelined: Bool

  init(stored: SharedVersion?, pipelined: Bool) {
    engine = VersionEngine(stored: stored)
    self.pipelined = pipelined
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
