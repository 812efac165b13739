import TetherSupport

/// What follows a save in flight once its reference is gone: the change that was waiting for
/// it, handed to the key when the save ends, conditional on the version that save wrote.
///
/// The reference's `deinit` cannot wait for the save in flight, and the save's continuation no
/// longer reaches the reference (it holds it weakly). Both hold this instead: whichever comes
/// second (the save's end, or the orphaned change) makes the last save. So the last change is
/// never lost with its holders, and it still never overwrites a version they had not seen.
final class SaveSuccessor: Sendable {
  private enum Stage {
    case waiting
    /// The save ended (with the version it wrote, if it said) before any change was orphaned.
    case ended(SharedVersion?)
    /// The change to save once the save ends: given the version the save wrote, if any.
    case orphaned(@Sendable (SharedVersion?) -> Void)
    case done
  }

  private let stage = Lock(Stage.waiting)

  /// The save in flight ended, having written `written` (`nil`: not written, or no version).
  func saveEnded(written: SharedVersion?) {
    let orphan = stage.withLock { stage -> (@Sendable (SharedVersion?) -> Void)? in
      guard case .orphaned(let orphan) = stage else {
        stage = .ended(written)
        return nil
      }
      stage = .done
      return orphan
    }
    orphan?(written)
  }

  /// The reference is gone with `save` waiting: it runs when the save in flight ends (now, if
  /// it already has).
  func orphan(_ save: @escaping @Sendable (SharedVersion?) -> Void) {
    let written = stage.withLock { stage -> SharedVersion?? in
      guard case .ended(let written) = stage else {
        stage = .orphaned(save)
        return nil
      }
      stage = .done
      return .some(written)
    }
    if let written { save(written) }
  }
}
