// libFuzzer harness for `VersionEngine`: one holder's engine against a model store with
// numbered revisions, where each input byte is one event (a local change, the store answering
// the save in flight, that answer reaching the engine, another client's write or deletion, an
// announcement delivered, a load started or answered, an atomic update of the holder's, the
// write of a failed save landing after all: its background retry, or a write whose outcome was
// unknown landing late), chosen among those that make sense now.
// The store announces every write, the holder's own included, in order, and answers loads
// from the moment they start (the stalest a load can be).
// After every event (a violation traps, which libFuzzer reports as a crash):
// - at most one save is in flight;
// - a save is never conditional on a version newer than the holder has seen;
// - a write the store accepts over someone else's version was derived from a value made after
//   the holder took that version (nothing is overwritten unseen);
// - the holder's own writes are never taken as someone else's;
// - the version the holder has never goes back to a lower number.

/// libFuzzer's entry point: checks the properties above for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  var model = Model()
  for byte in UnsafeRawBufferPointer(start: start, count: count) {
    model.step(byte)
    model.check()
  }
  return 0
}

struct Model {
  var engine = VersionEngine()
  // The store.
  var revision = 0
  var present = false
  var ownRevisions: Set<Int> = []
  var externalRevisions: [Int] = []
  var announcements: [SharedVersion] = []
  var loads: [(startedAt: UInt64, read: SharedVersion)] = []
  // The holder, as the model sees it.
  /// The newest revision of someone else's the holder has taken (0: none).
  var seenExternal = 0
  /// The highest revision the holder knows of: taken or written by itself.
  var seenRevision = 0
  /// The `seenExternal` of the newest change waiting for the save in flight.
  var pendingSeenExternal: Int?
  /// The save in flight: its condition, what its change had seen, and the store's answer.
  var inFlight: (condition: SharedVersion?, seenExternal: Int, answer: VersionEngine.SaveEnd?)?
  /// The last save that failed (its condition and what its change had seen): the key may still
  /// write it, conditionally, outside the save queue.
  var failedSave: (condition: SharedVersion?, seenExternal: Int)?
  /// Own writes of a failed save that landed, not told to the engine yet (the key tells them
  /// in order, before a load answers with one of them).
  var untold: [SharedVersion] = []
  var lastOrdinal: Int64?

  var current: SharedVersion {
    present
      ? SharedVersion(revision) : revision == 0 ? .absent : .deleted(at: SharedVersion(revision))
  }

  mutating func step(_ byte: UInt8) {
    switch byte & 0x0F {
    case 0, 1, 2:
      change()
    case 3, 4:
      answerSave(refusalHandsOver: byte & 0x10 == 0, fails: byte & 0x60 == 0x60)
    case 5, 6:
      endSave()
    case 7:
      externalWrite(delete: byte & 0x10 != 0)
    case 8, 9, 10:
      deliverAnnouncement()
    case 11:
      loads.append((engine.loadStart, current))
    case 12:
      answerLoad(changedLocally: byte & 0x10 != 0)
    case 13:
      atomicUpdate()
    case 14:
      failedSaveLands(toldAtOnce: byte & 0x10 == 0)
    case 15:
      tellOwnWrite()
    default:
      break
    }
  }

  mutating func change() {
    let basis = engine.basis
    if let condition = engine.saveRequested(basis) {
      precondition(inFlight == nil, "a second save in flight")
      issue(condition, seenExternal: seenExternal)
    } else {
      precondition(inFlight != nil, "a change waits with no save in flight")
      pendingSeenExternal = seenExternal
    }
  }

  mutating func issue(_ condition: SharedVersion?, seenExternal: Int) {
    if let number = condition?.ordinal {
      precondition(Int(number) <= seenRevision, "conditional on a version the holder never saw")
    }
    inFlight = (condition, seenExternal, nil)
  }

  mutating func answerSave(refusalHandsOver: Bool, fails: Bool) {
    guard let save = inFlight, save.answer == nil else { return }
    if fails {
      inFlight?.answer = .failed
      return
    }
    guard accepts(save.condition) else {
      let stored = refusalHandsOver ? current : nil
      inFlight?.answer = .refused(stored: stored, handedOver: refusalHandsOver)
      return
    }
    // Accepted over revision `revision`: when it is someone else's write, the change must
    // have been made after the holder took it (a run of the holder's own writes is derived
    // from its first, checked when that one was accepted).
    if let condition = save.condition, !condition.isAbsent, !ownRevisions.contains(revision) {
      precondition(revision <= save.seenExternal, "overwrote a write the holder never saw")
    }
    revision += 1
    present = true
    ownRevisions.insert(revision)
    announcements.append(SharedVersion(revision))
    inFlight?.answer = .saved(SharedVersion(revision))
  }

  /// Whether the store accepts a write conditional on `condition` now.
  func accepts(_ condition: SharedVersion?) -> Bool {
    switch condition {
    case nil: true
    case let condition? where condition.isAbsent: !present
    case let condition?: condition.number == Int64(revision)
    }
  }

  mutating func endSave() {
    guard let save = inFlight, let answer = save.answer else { return }
    inFlight = nil
    if case .failed = answer { failedSave = (save.condition, save.seenExternal) }
    if case .saved(let written?) = answer {
      seenRevision = max(seenRevision, Int(written.ordinal!))
    }
    let held = engine.held
    let after = engine.saveEnded(answer)
    if after.takeConflictValue, case .refused(let stored?, _) = answer { took(stored) }
    if after.takeHeld, let held {
      precondition(!isOwn(held), "the holder's own write was taken as someone else's")
      took(held)
    }
    if let condition = after.next {
      issue(condition, seenExternal: pendingSeenExternal ?? seenExternal)
    }
    pendingSeenExternal = nil
  }

  /// An atomic update of the holder's (read, transform and write under the store's lock)
  /// stores the next revision, announced like any write, and answers with it.
  mutating func atomicUpdate() {
    revision += 1
    present = true
    ownRevisions.insert(revision)
    announcements.append(SharedVersion(revision))
    let version = SharedVersion(revision)
    engine.updated(to: version)
    took(version)
  }

  /// The last failed save's write lands after all, if its compare still holds (a background
  /// retry, or a write whose outcome was unknown). The key tells the engine of it as its own
  /// (`resolvedLater(with:version:)`, `yieldOwnWrite(version:)`) at once, announcing it like any
  /// write, or later (`tellOwnWrite`), its echo suppressed meanwhile, as the etcd store does;
  /// someone else's writes may be delivered before it is told.
  mutating func failedSaveLands(toldAtOnce: Bool) {
    guard let save = failedSave else { return }
    failedSave = nil
    guard accepts(save.condition) else { return }
    if let condition = save.condition, !condition.isAbsent, !ownRevisions.contains(revision) {
      precondition(revision <= save.seenExternal, "a retry overwrote a write never seen")
    }
    revision += 1
    present = true
    ownRevisions.insert(revision)
    seenRevision = max(seenRevision, revision)
    if toldAtOnce {
      announcements.append(SharedVersion(revision))
      engine.ownWriteLanded(at: SharedVersion(revision))
    } else {
      untold.append(SharedVersion(revision))
    }
  }

  mutating func tellOwnWrite() {
    guard !untold.isEmpty else { return }
    engine.ownWriteLanded(at: untold.removeFirst())
  }

  mutating func externalWrite(delete: Bool) {
    revision += 1
    present = !delete
    externalRevisions.append(revision)
    announcements.append(current)
  }

  mutating func deliverAnnouncement() {
    guard !announcements.isEmpty else { return }
    arrive(announcements.removeFirst(), loadStartedAt: nil, changedLocally: false)
  }

  mutating func answerLoad(changedLocally: Bool) {
    guard !loads.isEmpty else { return }
    let load = loads.removeFirst()
    if let number = load.read.ordinal {
      while let first = untold.first, first.ordinal! <= number { tellOwnWrite() }
    }
    arrive(load.read, loadStartedAt: load.startedAt, changedLocally: changedLocally)
  }

  mutating func arrive(_ version: SharedVersion, loadStartedAt: UInt64?, changedLocally: Bool) {
    let arrival = engine.arrived(
      version, loadStartedAt: loadStartedAt, changedLocally: changedLocally)
    if arrival == .take {
      precondition(!isOwn(version), "the holder's own write was taken as someone else's")
      took(version)
    }
  }

  func isOwn(_ version: SharedVersion) -> Bool {
    !version.isAbsent && version.ordinal.map { ownRevisions.contains(Int($0)) } == true
  }

  /// The holder took the store's state at `version`: it has seen every write up to it.
  mutating func took(_ version: SharedVersion) {
    guard let number = version.ordinal.map(Int.init) else { return }
    seenRevision = max(seenRevision, number)
    seenExternal = max(seenExternal, externalRevisions.last { $0 <= number } ?? 0)
  }

  mutating func check() {
    precondition(engine.inFlight == (inFlight != nil), "the engine and its driver disagree")
    if let ordinal = engine.stored?.ordinal {
      if let last = lastOrdinal { precondition(ordinal >= last, "the version went backwards") }
      lastOrdinal = ordinal
    }
  }
}
