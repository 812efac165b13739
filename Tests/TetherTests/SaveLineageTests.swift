import Testing
@testable import Tether

/// The pure record of a run of this process's own writes (no I/O, no clock).
struct SaveLineageTests {
  let v = (0..<6).map { SharedVersion($0) }

  @Test func withoutOwnWritesAVersionIsItsOwnBase() {
    var lineage = SaveLineage()
    #expect(lineage.base(derivedFrom: nil) == nil)
    #expect(lineage.base(derivedFrom: v[1]) == v[1])
    lineage.external(v[1])
    #expect(lineage.base(derivedFrom: v[1]) == v[1])
  }

  @Test func savesDerivedFromVersionsOurOwnWritesReplacedGoOnOverTheNewest() {
    var lineage = SaveLineage()
    lineage.external(v[1])
    lineage.ownWrite(derivedFrom: v[1], wrote: v[2])
    lineage.ownWrite(derivedFrom: v[2], wrote: v[3])
    #expect(lineage.base(derivedFrom: v[1]) == v[3])
    #expect(lineage.base(derivedFrom: v[2]) == v[3])
    #expect(lineage.base(derivedFrom: v[3]) == v[3])
    #expect(lineage.latest == v[3])
  }

  @Test func someoneElsesVersionEndsTheRun() {
    var lineage = SaveLineage()
    lineage.external(v[1])
    lineage.ownWrite(derivedFrom: v[1], wrote: v[2])
    lineage.external(v[3])
    // Derived from before the other writer's version: its compare must fail.
    #expect(lineage.base(derivedFrom: v[1]) == v[1])
    #expect(lineage.base(derivedFrom: v[2]) == v[2])
    #expect(lineage.base(derivedFrom: v[3]) == v[3])
  }

  @Test func readingBackOurNewestWriteKeepsTheRun() {
    var lineage = SaveLineage()
    lineage.external(v[1])
    lineage.ownWrite(derivedFrom: v[1], wrote: v[2])
    lineage.external(v[2])
    #expect(lineage.base(derivedFrom: v[1]) == v[2])
  }

  @Test func aVersionTheRunNeverHadIsLeftAlone() {
    var lineage = SaveLineage()
    lineage.external(v[2])
    lineage.ownWrite(derivedFrom: v[2], wrote: v[3])
    #expect(lineage.base(derivedFrom: v[0]) == v[0])
  }

  @Test func anUnconditionalWriteStartsANewRunFromIt() {
    var lineage = SaveLineage()
    lineage.external(v[2])
    lineage.ownWrite(derivedFrom: nil, wrote: v[4])
    #expect(lineage.base(derivedFrom: v[2]) == v[4])
    #expect(lineage.base(derivedFrom: v[4]) == v[4])
  }

  @Test func theRunRemembersABoundedNumberOfVersions() {
    var lineage = SaveLineage()
    lineage.external(SharedVersion(0))
    for revision in 0..<(SaveLineage.limit + 10) {
      lineage.ownWrite(derivedFrom: SharedVersion(revision), wrote: SharedVersion(revision + 1))
    }
    let newest = SharedVersion(SaveLineage.limit + 10)
    #expect(lineage.base(derivedFrom: SharedVersion(20)) == newest)
    #expect(lineage.base(derivedFrom: SharedVersion(5)) == SharedVersion(5))
    // The run's first version is kept: holders whose key does not resume with the versions it
    // wrote still have it, however many writes they made over it.
    #expect(lineage.base(derivedFrom: SharedVersion(0)) == newest)
  }
}
