import Testing
import Tether

/// The version engine on its own: events in, decisions out, no key and no store.
struct VersionEngineTests {
  let v = (0...9).map { SharedVersion($0) }

  @Test func beforeAnythingIsSeenASaveIsConditionalOnNothingStored() {
    var engine = VersionEngine()
    #expect(engine.saveRequested(engine.basis) == .some(.absent))
  }

  @Test func oneSaveInFlightAndChangesMadeMeanwhileCoalesce() {
    var engine = VersionEngine(stored: v[1])
    #expect(engine.saveRequested(engine.basis) == .some(v[1]))
    #expect(engine.saveRequested(engine.basis) == nil)
    #expect(engine.saveRequested(engine.basis) == nil)
    let after = engine.saveEnded(.saved(v[2]))
    #expect(after.next == .some(v[2]), "derived from the version the previous save wrote")
    #expect(engine.inFlight)
    #expect(engine.saveEnded(.saved(v[3])).next == nil)
    #expect(!engine.inFlight)
    #expect(engine.stored == v[3])
  }

  @Test func aChangeDerivedBeforeSomeoneElsesValueStaysConditionalOnTheOlderVersion() {
    var engine = VersionEngine(stored: v[1])
    let basis = engine.basis
    #expect(engine.arrived(v[4]) == .take)
    #expect(engine.saveRequested(basis) == .some(v[1]))
  }

  @Test func ownWritesEchoingBackAreIgnored() {
    var engine = VersionEngine(stored: v[1])
    _ = engine.saveRequested(engine.basis)
    _ = engine.saveEnded(.saved(v[2]))
    #expect(engine.arrived(v[2]) == .ignore)
  }

  @Test func anEchoArrivingBeforeItsSaveEndedIsHeldThenDropped() {
    var engine = VersionEngine(stored: v[1])
    _ = engine.saveRequested(engine.basis)
    #expect(engine.arrived(v[2]) == .hold)
    let after = engine.saveEnded(.saved(v[2]))
    #expect(!after.takeHeld)
    #expect(engine.stored == v[2])
  }

  @Test func someoneElsesValueHeldDuringASaveIsTakenAfterIt() {
    var engine = VersionEngine(stored: v[1])
    _ = engine.saveRequested(engine.basis)
    _ = engine.saveRequested(engine.basis)  // coalesced, derived before the arrival
    #expect(engine.arrived(v[3]) == .hold)
    let after = engine.saveEnded(.saved(v[2]))
    #expect(after.takeHeld)
    #expect(engine.stored == v[3])
    #expect(after.next == .some(v[1]), "the waiting change never saw v3: it is refused")
  }

  @Test func numberedVersionsNeverGoBackwards() {
    var engine = VersionEngine(stored: v[5])
    #expect(engine.arrived(v[4]) == .ignore)
    #expect(engine.arrived(.deleted(at: v[3])) == .ignore)
    #expect(engine.arrived(.deleted(at: v[6])) == .take)
    #expect(engine.stored == .deleted(at: v[6]))
  }

  @Test func aRefusalHandingOverTheStoredVersionDropsTheChangesDerivedFromIt() {
    var engine = VersionEngine(stored: v[1])
    _ = engine.saveRequested(engine.basis)
    _ = engine.saveRequested(engine.basis)
    let after = engine.saveEnded(.refused(stored: v[4], handedOver: true))
    #expect(after.takeConflictValue)
    #expect(after.dropPending)
    #expect(after.next == nil)
    #expect(engine.stored == v[4])
    #expect(engine.saveRequested(engine.basis) == .some(v[4]))
  }

  @Test func aRefusalWithoutTheValueAsksForALoad() {
    var engine = VersionEngine(stored: v[1])
    _ = engine.saveRequested(engine.basis)
    let after = engine.saveEnded(.refused(stored: nil, handedOver: false))
    #expect(after.load)
    #expect(engine.arrived(v[4], loadStartedAt: engine.loadStart) == .take)
  }

  @Test func aLoadOvertakenByAnOwnWriteIsDropped() {
    var engine = VersionEngine(stored: .absent)
    let load = engine.loadStart
    _ = engine.saveRequested(engine.basis)
    _ = engine.saveEnded(.saved(v[1]))
    #expect(engine.arrived(.absent, loadStartedAt: load) == .ignore)
    #expect(engine.stored == v[1])
  }

  @Test func aLateFirstLoadAfterALocalChangeIsTaken() {
    var engine = VersionEngine()
    let load = engine.loadStart
    _ = engine.saveRequested(engine.basis)  // the local change, derived from nothing seen
    #expect(engine.arrived(v[7], loadStartedAt: load, changedLocally: true) == .hold)
    let after = engine.saveEnded(.failed)
    #expect(after.takeHeld)
    #expect(engine.stored == v[7])
  }

  @Test func aKeyWithoutVersionsKeepsLastWriterWins() {
    var engine = VersionEngine()
    let load = engine.loadStart
    #expect(engine.arrived(nil, loadStartedAt: load, changedLocally: true) == .ignore)
    #expect(engine.arrived(nil) == .take)
    #expect(engine.saveRequested(engine.basis) == .some(nil))
  }

  /// An atomic update (the file key's, under the file's lock) stores outside the save queue:
  /// the holders take its version as theirs, its echo is ignored, the next save is conditional
  /// on it, and a change made before it stays conditional on the older version.
  @Test func anAtomicUpdateIsAnOwnWriteTheNextSaveBuildsOn() {
    var engine = VersionEngine(stored: v[1])
    let before = engine.basis
    engine.updated(to: v[2])
    #expect(engine.stored == v[2])
    #expect(engine.arrived(v[2]) == .ignore, "its own write echoing back")
    #expect(engine.saveRequested(engine.basis) == .some(v[2]))
    _ = engine.saveEnded(.saved(v[3]))
    #expect(engine.saveRequested(before) == .some(v[1]), "derived from before the update")
  }

  @Test func anUpdateOlderThanWhatTheHoldersHaveChangesNothing() {
    var engine = VersionEngine(stored: v[5])
    engine.updated(to: v[4])
    #expect(engine.stored == v[5])
  }

  /// A save written over someone else's value the holders were given while it was in flight
  /// (a file key's `save()` writes unconditionally): that value is older than the write, and
  /// is not taken after it.
  @Test func aValueHeldDuringASaveThatOverwroteItIsDropped() {
    var engine = VersionEngine(stored: v[1])
    _ = engine.saveRequested(engine.basis)
    #expect(engine.arrived(v[2]) == .hold)
    let after = engine.saveEnded(.saved(v[3]))
    #expect(!after.takeHeld)
    #expect(engine.stored == v[3])
  }

  /// A key's own write that no save in flight asked for (a background retry of a failed save,
  /// a write whose outcome was unknown landing late): the holders keep their value, the next
  /// save is conditional on it, and its echo is ignored.
  @Test func anOwnWriteOutsideTheSavesIsTheBasisOfTheNextSave() {
    var engine = VersionEngine(stored: v[1])
    _ = engine.saveRequested(engine.basis)
    _ = engine.saveEnded(.failed)
    let before = engine.basis
    let generation = engine.generation
    engine.ownWriteLanded(at: v[2])
    #expect(engine.stored == v[2])
    #expect(engine.generation == generation, "nothing of someone else's was taken")
    #expect(engine.arrived(v[2]) == .ignore, "its own write echoing back")
    #expect(engine.saveRequested(before) == .some(v[2]), "a change made before builds on it")
  }

  /// Someone else's version taken after the own write still makes a change derived before it
  /// conditional on the older version: the store refuses it.
  @Test func aChangeMadeBeforeSomeoneElsesValueStaysRefusedAfterAnOwnWrite() {
    var engine = VersionEngine(stored: v[1])
    engine.ownWriteLanded(at: v[2])
    let basis = engine.basis
    #expect(engine.arrived(v[3]) == .take)
    #expect(engine.saveRequested(basis) == .some(v[2]))
  }

  @Test func anOwnWriteOlderThanWhatTheHoldersHaveChangesNothing() {
    var engine = VersionEngine(stored: v[5])
    engine.ownWriteLanded(at: v[4])
    #expect(engine.stored == v[5])
    #expect(engine.arrived(v[4]) == .ignore)
  }

  /// An own write landing while a save is in flight: a delivery held meanwhile that is not
  /// newer than it is dropped, and so is its own echo held before it was known.
  @Test func anOwnWriteLandingDuringASaveDropsAnOlderHeldDelivery() {
    var engine = VersionEngine(stored: v[1])
    _ = engine.saveRequested(engine.basis)
    #expect(engine.arrived(v[2]) == .hold)
    engine.ownWriteLanded(at: v[2])
    #expect(engine.held == nil)
    let after = engine.saveEnded(.saved(v[3]))
    #expect(!after.takeHeld)
    #expect(engine.stored == v[3])
  }

  @Test func absentVersionsAreVersionsOfTheirOwn() {
    #expect(SharedVersion.absent != SharedVersion(""))
    #expect(SharedVersion.deleted(at: v[3]) != v[3])
    #expect(SharedVersion.deleted(at: v[3]) != .absent)
    #expect(SharedVersion.deleted(at: v[3]).deletedAt == v[3])
    #expect(SharedVersion.deleted(at: v[3]).isAbsent)
    #expect(SharedVersion.deleted(at: v[3]).number == nil)
    #expect(SharedVersion.absent.deletedAt == nil)
    #expect(SharedVersion.absent.description == "absent")
    #expect(!v[3].isAbsent)
  }
}
