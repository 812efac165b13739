/// The one place that decides versions for a shared value: what a save is derived from, what
/// it is conditional on, and whether a delivered version is this process's own write echoing
/// back or someone else's change. A pure value, no I/O: events in, decisions out (see
/// ARCHITECTURE.md, "Where versions are decided").
///
/// Its rules, which a key author can rely on (WritingACustomStrategy):
/// - At most one save is in flight. Changes made meanwhile coalesce into one next save, made
///   when the one in flight ends.
/// - A save is conditional on the version its change was derived from: the version the holders
///   had when the change was made, or, if only this process's own saves ended since, the
///   version the last of them wrote. A change made before someone else's value was taken stays
///   conditional on the older version, so the store refuses it.
/// - Before anything was seen, the version is ``SharedVersion/absent``: "write only if nothing
///   is stored".
/// - A delivered version this process's own save wrote is never taken as someone else's
///   change, nor is a numbered version older than the one held (values never go backwards).
///   While a save is in flight, a delivered version is held until the save ends, since it may
///   be that save's own write arriving before its answer.
/// - A refused save that hands over the stored version makes it the holders' version; a
///   change made while it was in flight was derived from the refused value and is dropped.
@usableFromInline
package struct VersionEngine: Sendable, Equatable {
  /// What a local change was derived from, captured when its `withLock` body ran (under the
  /// value's lock, so nothing delivered can slip in between).
  @usableFromInline
  package struct Basis: Sendable, Equatable {
    /// How many times the holders had taken someone else's version then.
    package var generation: UInt64
    /// The version the holders had then.
    package var version: SharedVersion?
  }

  /// How a save ended.
  package enum SaveEnd: Sendable, Equatable {
    /// Written, at this version if the key said.
    case saved(SharedVersion?)
    /// Refused because the store moved on. `stored` is the stored version the key handed over
    /// with the stored value or its absence (`handedOver`), else unknown.
    case refused(stored: SharedVersion?, handedOver: Bool)
    /// Failed otherwise: whether it was written is unknown.
    case failed
  }

  /// What to do with a delivered value (a load's answer, a subscription's yield).
  package enum Arrival: Sendable, Equatable {
    /// The holders take it: it is someone else's newer value.
    case take
    /// A save is in flight: keep it until the save ends, replacing any value held before.
    case hold
    /// Drop it: this process's own write, a version the holders have, an older one, or a load
    /// answer overtaken by what happened since it began.
    case ignore
  }

  /// What follows the end of a save.
  package struct AfterSave: Sendable, Equatable {
    /// The holders take the value the key handed over with a refusal.
    package var takeConflictValue = false
    /// The holders take the held arrival (else it is dropped, if there was one).
    package var takeHeld = false
    /// The refusal handed nothing over: load the stored value.
    package var load = false
    /// The coalesced change was derived from the refused value: it is dropped, not saved.
    package var dropPending = false
    /// Make the coalesced save now, conditional on this version (outer `nil`: no save).
    package var next: SharedVersion??
  }

  /// The newest stored version the holders know: delivered to them, or written by their own
  /// saves. ``SharedVersion/absent`` until anything was seen; `nil` for a key without versions.
  package private(set) var stored: SharedVersion?
  /// Bumped whenever the holders take someone else's version (a delivery, a refusal's).
  package private(set) var generation: UInt64 = 0
  /// Bumped whenever what is stored is known to have changed (anything taken, any own save
  /// that may have written); a load answer that began before is stale.
  package private(set) var epoch: UInt64 = 0
  /// Whether a save is in flight.
  package private(set) var inFlight = false
  /// The basis of the coalesced change waiting for the save in flight.
  package private(set) var pending: Basis?
  /// The newest version delivered while the save was in flight.
  package private(set) var held: SharedVersion?
  /// The versions this process's own saves wrote, newest last (at most ``ownWriteLimit``).
  package private(set) var ownWrites: [SharedVersion] = []

  /// How many own writes are remembered to recognise their echoes: a delivery lags its write
  /// by at most a few saves, since only one is in flight at a time.
  package static var ownWriteLimit: Int { 16 }

  /// An engine whose holders have seen `stored`: ``SharedVersion/absent`` (the default) when
  /// nothing was seen yet.
  package init(stored: SharedVersion? = .absent) {
    self.stored = stored
  }

  /// What a change made now is derived from.
  package var basis: Basis { Basis(generation: generation, version: stored) }

  /// A change derived from `basis` asks to be saved. Returns the version to make the save
  /// conditional on, if it is to be made now; `nil` when it waits behind the save in flight
  /// (then it replaces any change already waiting: the newest value is saved once).
  package mutating func saveRequested(_ basis: Basis) -> SharedVersion?? {
    guard !inFlight else {
      pending = basis
      return nil
    }
    inFlight = true
    return .some(condition(for: basis))
  }

  /// The save in flight ended as `end`: what follows.
  package mutating func saveEnded(_ end: SaveEnd) -> AfterSave {
    var after = AfterSave()
    guard inFlight else { return after }
    inFlight = false
    let held = self.held
    self.held = nil
    switch end {
    case .saved(let written?):
      epoch &+= 1
      rememberOwnWrite(written)
      // An atomic update may have stored a newer numbered version meanwhile: keep that one.
      if !isOlder(written) { stored = written }
      let written = stored ?? written
      if let held, held != written, isNewer(held, than: written) != false {
        take(held)
        after.takeHeld = true
      }
    case .saved(nil):
      // Written at a version the key did not say: what the holders knew is still the basis a
      // key that tracks its own writes expects; a held delivery is taken, as before saves were
      // answered with versions.
      epoch &+= 1
      if let held, !isOlder(held) {
        take(held)
        after.takeHeld = true
      }
    case .refused(let version, let handedOver):
      after.dropPending = pending != nil
      pending = nil
      if handedOver, let version, isOlder(version) {
        // The holders already have a newer version (an atomic update's, taken meanwhile).
        if let held, let stored, isNewer(held, than: stored) == true {
          take(held)
          after.takeHeld = true
        }
      } else if handedOver {
        take(version)
        after.takeConflictValue = true
        if let held, let version, held != version, isNewer(held, than: version) == true {
          take(held)
          after.takeHeld = true
        }
      } else if let held, !isOlder(held) {
        take(held)
        after.takeHeld = true
      } else {
        // Someone else's version is stored; until it arrives, changes are conditional on what
        // the holders had, and are refused.
        generation &+= 1
        epoch &+= 1
        after.load = true
      }
    case .failed:
      if let held, !isOlder(held) {
        take(held)
        after.takeHeld = true
      }
    }
    if let pending {
      self.pending = nil
      inFlight = true
      after.next = .some(condition(for: pending))
    }
    return after
  }

  /// An atomic update of this process stored `version` (outside the save queue): the holders
  /// take it as theirs, and its delivery is this process's own write. A change made before it
  /// was derived from an older value, so its save stays conditional on that older version.
  /// Ignored when the holders already know a newer numbered version.
  package mutating func updated(to version: SharedVersion) {
    if let stored, isNewer(version, than: stored) == false { return }
    rememberOwnWrite(version)
    if inFlight, let held, isNewer(held, than: version) != true { self.held = nil }
    take(version)
  }

  /// A write of this process's own that no save in flight asked for stored `version`: a key's
  /// background retry of a save that failed, or a write whose outcome was unknown that landed
  /// late. It wrote a value the holders already have (or an older one of theirs), so they keep
  /// their value: the next save is conditional on `version` (changes made before it build on
  /// it, like after a save of their own), and its delivery is this process's own write.
  /// Ignored when the holders already know a newer numbered version.
  package mutating func ownWriteLanded(at version: SharedVersion) {
    if let stored, isNewer(version, than: stored) == false { return }
    rememberOwnWrite(version)
    if inFlight, let held, isNewer(held, than: version) != true { self.held = nil }
    stored = version
    epoch &+= 1
  }

  /// The epoch a load beginning now records, to tell ``arrived(_:loadStartedAt:changedLocally:)``.
  package var loadStart: UInt64 { epoch }

  /// A value arrived from the key at `version`: from a subscription (`loadStartedAt` `nil`) or
  /// as the answer of a load that began at `loadStartedAt`. `changedLocally` says whether the
  /// holders changed the value since that load began.
  package mutating func arrived(
    _ version: SharedVersion?, loadStartedAt: UInt64? = nil, changedLocally: Bool = false
  ) -> Arrival {
    guard let version else {
      // A key without versions: take it, unless it is a load answer overtaken by a change
      // (a local one included: it was saved unconditionally, so the store has it).
      if let loadStartedAt, loadStartedAt != epoch || changedLocally { return .ignore }
      if inFlight {
        held = nil
      }
      take(nil)
      return .take
    }
    if version == stored || ownWrites.contains(version) { return .ignore }
    if let stored, isNewer(version, than: stored) == false { return .ignore }
    if let loadStartedAt, loadStartedAt != epoch {
      guard let stored, isNewer(version, than: stored) == true else { return .ignore }
    }
    if inFlight {
      if let held, isNewer(version, than: held) == false { return .ignore }
      held = version
      return .hold
    }
    take(version)
    return .take
  }

  /// The version a save derived from `basis` is conditional on: the newest known, unless
  /// someone else's version was taken since the change was made.
  package func condition(for basis: Basis) -> SharedVersion? {
    basis.generation == generation ? stored : basis.version
  }

  private mutating func take(_ version: SharedVersion?) {
    stored = version
    generation &+= 1
    epoch &+= 1
  }

  private mutating func rememberOwnWrite(_ version: SharedVersion) {
    ownWrites.append(version)
    if ownWrites.count > Self.ownWriteLimit { ownWrites.removeFirst() }
  }

  /// Whether `version` is numbered older than the version the holders have.
  private func isOlder(_ version: SharedVersion) -> Bool {
    guard let stored else { return false }
    return isNewer(stored, than: version) == true
  }

  /// Whether `version` is newer than `other`: known only for numbered versions (and
  /// deletions of them); `nil` otherwise.
  private func isNewer(_ version: SharedVersion, than other: SharedVersion) -> Bool? {
    guard let new = version.ordinal, let old = other.ordinal else { return nil }
    return new > old
  }
}
