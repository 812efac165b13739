import Streams
import Synchronization
import Testing
import Tether
import TetherSupport
import TetherTesting

/// What `withLock` guarantees when its body throws or touches the value it is mutating.
@Suite(.isolatedSharedState)
struct SharedWithLockTests {
  struct Failure: Error {}

  @Test func throwingBodyLeavesAWordSizedValueUnchangedUnpublishedAndUnsaved() throws {
    let store = TestStore<Int>(stored: 1)
    @Shared(TestKey("count", store: store)) var count = 0
    let seen = Lock<[Int]>([])
    let cancellable = $count.publisher.sink { value in seen.withLock { $0.append(value) } }
    #expect(throws: Failure.self) {
      try $count.withLock { value in
        value = 99
        throw Failure()
      }
    }
    #expect(count == 1)
    #expect(store.saves.isEmpty)
    #expect(seen.withLock { $0 } == [1])
    $count.withLock { $0 += 1 }  // and the value still works normally afterwards
    #expect(count == 2)
    #expect(store.saves == [2])
    withExtendedLifetime(cancellable) {}
  }

  @Test func throwingBodyLeavesALargerValueAndItsMembersUnchanged() throws {
    struct Profile: Sendable {  // not Equatable: every applied change is announced
      var name = "ada"
      var tags: [String] = ["a"]
    }
    let store = TestStore<Profile>()
    @Shared(TestKey("profile", store: store)) var profile = Profile()
    let announcements = Lock(0)
    let cancellable = $profile.publisher.sink { _ in announcements.withLock { $0 += 1 } }
    #expect(throws: Failure.self) {
      try $profile.withLock { profile in
        profile.name = "grace"
        profile.tags.append("b")
        throw Failure()
      }
    }
    #expect(throws: Failure.self) {
      try $profile.tags.withLock { tags in
        tags.removeAll()
        throw Failure()
      }
    }
    #expect(profile.name == "ada")
    #expect(profile.tags == ["a"])
    #expect(store.saves.isEmpty)
    #expect(announcements.withLock { $0 } == 1)  // the initial value only
    withExtendedLifetime(cancellable) {}
  }

  @Test(arguments: [1, 2])
  func readingTheValueInsideItsOwnWithLockIsReportedAndSeesTheValueBeforeTheBody(
    variant: Int
  ) {
    let issues = TetherIssueRecorder()
    if variant == 1 {
      let count = issues.record { Shared(wrappedValue: 1, .inMemory("count")) }
      _ = count.wrappedValue  // arms the lock-free read of a word-sized value
      var seen: Int?
      count.withLock { value in
        value = 2
        seen = count.wrappedValue
      }
      #expect(seen == 1)
      #expect(count.wrappedValue == 2)
    } else {
      let name = issues.record { Shared(wrappedValue: "a", .inMemory("name")) }
      var seen: String?
      name.withLock { value in
        value = "b"
        seen = name.wrappedValue
      }
      #expect(seen == "a")
      #expect(name.wrappedValue == "b")
    }
    #expect(issues.messages.count == 1)
    let message = issues.messages.first ?? ""
    #expect(message.contains(".inMemory(\"\(variant == 1 ? "count" : "name")\")"))
    #expect(message.contains("inout argument"))
  }

  @Test func nestedWithLockIsReportedAndItsChangeDiscardedWithoutDeadlock() {
    let issues = TetherIssueRecorder()
    let count = issues.record { Shared(wrappedValue: 10, .inMemory("nested")) }
    let inner = count.withLock { value -> Int in
      value += 1
      return count.withLock { value in
        value += 100
        return value
      }
    }
    #expect(inner == 110)  // the inner body ran on the value before the outer body: 10
    #expect(count.wrappedValue == 11)
    #expect(issues.messages.count == 1)
    let message = issues.messages.first ?? ""
    #expect(message.contains("withLock on .inMemory(\"nested\")"))
    #expect(message.contains("outer body's inout argument"))
  }

  @Test
  func derivedMemberReadInsideTheParentsWithLockSeesTheChangeAndOnlyANestedWithLockIsReported() {
    struct Settings: Equatable, Sendable {
      var volume = 3
      var theme = "light"
    }
    let issues = TetherIssueRecorder()
    let settings = issues.record { Shared(wrappedValue: Settings(), .inMemory("settings")) }
    var seen: String?
    settings.withLock { value in
      value.theme = "dark"
      seen = settings.theme.wrappedValue
      settings.volume.withLock { $0 = 0 }
    }
    #expect(seen == "dark")  // the value as the body changed it so far
    #expect(settings.wrappedValue == Settings(volume: 3, theme: "dark"))
    #expect(issues.messages.count == 1)  // the nested withLock on the member
    #expect(issues.messages.first?.contains("withLock on") == true)
  }

  @Test func statusInsideItsOwnWithLockIsReportedNotTrapped() {
    let issues = TetherIssueRecorder()
    let count = issues.record { Shared(wrappedValue: 0, .inMemory("status")) }
    var error: (any Error)?
    var loading = true
    count.withLock { _ in
      error = count.loadError
      loading = count.isLoading
    }
    #expect(error == nil)
    #expect(!loading)
    #expect(issues.messages.count == 2)
  }

  @Test func otherValuesAreFreeToReadInsideABody() {
    let issues = TetherIssueRecorder()
    let (a, b) = issues.record {
      (Shared(wrappedValue: 1, .inMemory("a")), Shared(wrappedValue: 2, .inMemory("b")))
    }
    a.withLock { $0 += b.wrappedValue }
    #expect(a.wrappedValue == 3)
    #expect(issues.messages.isEmpty)
  }
}
