/// A closure a caller passed as `@isolated(any)`, taken apart: the actor it must run on, and a
/// synchronous entry point that may be called only there (anywhere, when it has no actor).
///
/// `sink`, `handleEvents` and `assign(to:)` take their closures this way, with
/// `@_inheritActorContext`: a closure written in `@MainActor` code is isolated to the main actor
/// (so it may touch the view model's state), and one written in nonisolated code is a plain
/// `@Sendable` closure (so it may capture only `Sendable` state). The compiler checks both, as it
/// would for any other closure; this type only decides where to call it.
@usableFromInline
struct IsolatedClosure<Input>: Sendable {
  /// The actor the closure is isolated to, or `nil` for a nonisolated closure.
  let isolation: (any Actor)?
  /// The closure as a synchronous function: call it only on `isolation`.
  let body: @Sendable (Input) -> Void

  @usableFromInline init(_ closure: @escaping @Sendable @isolated(any) (Input) -> Void) {
    isolation = closure.isolation
    // Swift has no conversion from an `@isolated(any)` function to a synchronous one, though
    // both have the same representation: the standard library's `Observations` bitcasts its
    // `@isolated(any)` closure the same way to call it synchronously once it runs on the
    // closure's isolation (and `MainActor.assumeIsolated` bitcasts away `@MainActor`). `body`
    // is called only where `isolation` says: directly when it is `nil`, otherwise through an
    // `ActorQueue` on that actor.
    //
    // The cast goes through one-field structs: a function value handed to the generic
    // `unsafeBitCast` directly is re-abstracted on the way in and again on the way out, two
    // thunks that every delivered value then calls through.
    body = unsafeBitCast(IsolatedFunction(call: closure), to: PlainFunction<Input>.self).call
  }

  /// The same for a closure without a parameter (`handleEvents`' `receiveCancel`).
  init(_ closure: @escaping @Sendable @isolated(any) () -> Void) where Input == Void {
    isolation = closure.isolation
    let call = unsafeBitCast(closure, to: (@Sendable () -> Void).self)  // as above (called once)
    body = { _ in call() }
  }

  /// The closure as something any thread may call: `body` itself when the closure has no actor,
  /// otherwise a closure that hands each input to `queue`, which runs `body` on the actor.
  func delivered(through queue: ActorQueue?) -> @Sendable (Input) -> Void {
    guard let queue else { return body }
    let body = body
    return { input in
      // The input is handed over to the actor the way `receive(on:)` hands a value to its
      // scheduler: the publisher gave it to this subscriber and does not touch it again.
      nonisolated(unsafe) let input = input
      queue.run { body(input) }
    }
  }
}

/// An `@isolated(any)` function as a struct's only field, so that `unsafeBitCast` moves it
/// without re-abstracting it (see `IsolatedClosure.init`).
private struct IsolatedFunction<Input> {
  let call: @Sendable @isolated(any) (Input) -> Void
}

/// The same function seen as a synchronous one.
private struct PlainFunction<Input> {
  let call: @Sendable (Input) -> Void
}
