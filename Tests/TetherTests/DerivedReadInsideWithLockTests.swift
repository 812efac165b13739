import Testing
import Tether
import TetherTesting

private struct SyncUp: Identifiable, Equatable, Sendable {
  let id: Int
  var title: String
}

/// A value derived from a shared value, read inside the parent's `withLock`, answers the value
/// as the body changed it so far, and nothing is reported (as swift-sharing answers it).
@Suite(.isolatedSharedState)
struct DerivedReadInsideWithLockTests {
  @Test func anUnwrappedElementReadWhileItsCollectionDeletesItIsNotReported() throws {
    let issues = TetherIssueRecorder()
    let syncUps = issues.record {
      Shared(
        wrappedValue: [SyncUp(id: 1, title: "Design"), SyncUp(id: 2, title: "Engineering")],
        .inMemory("syncUps"))
    }
    let element = syncUps[id: 1]
    let syncUp = try #require(Shared(element))
    var titleBeforeDeletion: String?
    var elementAfterDeletion: SyncUp??
    var titleAfterDeletion: String?
    syncUps.withLock { list in
      list[0].title = "Renamed"
      titleBeforeDeletion = syncUp.wrappedValue.title
      list.removeAll { $0.id == 1 }
      elementAfterDeletion = .some(element.wrappedValue)
      // The unwrapped element keeps its last value once the element is gone.
      titleAfterDeletion = syncUp.wrappedValue.title
    }
    #expect(titleBeforeDeletion == "Renamed")
    #expect(elementAfterDeletion == .some(nil))
    #expect(titleAfterDeletion == "Renamed")
    #expect(syncUps.wrappedValue.map(\.id) == [2])
    #expect(issues.issues.isEmpty)
  }

  @Test func aMemberReadInsideTheParentsWithLockSeesTheValueBeingMutated() {
    let issues = TetherIssueRecorder()
    let syncUps = issues.record {
      Shared(wrappedValue: [SyncUp(id: 1, title: "Design")], .inMemory("titles"))
    }
    let count = syncUps.read { $0.count }
    let titles = syncUps.read { $0.map(\.title) }
    var seen: (Int, [String])?
    syncUps.withLock { list in
      list.append(SyncUp(id: 2, title: "Engineering"))
      list[0].title = "Product"
      seen = (count.wrappedValue, titles.wrappedValue)
    }
    #expect(seen?.0 == 2)
    #expect(seen?.1 == ["Product", "Engineering"])
    #expect(issues.issues.isEmpty)
  }

  @Test func aNestedWithLockReportPointsAtTheCallersLine() throws {
    let issues = TetherIssueRecorder()
    let count = issues.record { Shared(wrappedValue: 0, .inMemory("located-nested")) }
    var line = 0
    count.withLock { _ in
      line = #line + 1
      count.withLock { $0 += 1 }
    }
    let issue = try #require(issues.issues.first)
    #expect(issues.issues.count == 1)
    #expect(issue.fileID == #fileID)
    #expect(issue.line == line)
  }

  @Test func aNestedWithLockOnAMemberReportPointsAtTheCallersLine() throws {
    let issues = TetherIssueRecorder()
    let syncUps = issues.record {
      Shared(wrappedValue: [SyncUp(id: 1, title: "Design")], .inMemory("located-member"))
    }
    let syncUp = try #require(Shared(syncUps[id: 1]))
    var line = 0
    syncUps.withLock { _ in
      line = #line + 1
      syncUp.title.withLock { $0 = "Product" }
    }
    let issue = try #require(issues.issues.first)
    #expect(issues.issues.count == 1)
    #expect(issue.fileID == #fileID)
    #expect(issue.line == line)
    #expect(syncUps.wrappedValue.first?.title == "Design")  // the nested change is discarded
  }

  @Test func aReadOfTheValueInsideItsOwnWithLockIsReportedAtThatWithLocksLine() throws {
    let issues = TetherIssueRecorder()
    let count = issues.record { Shared(wrappedValue: 1, .inMemory("located-read")) }
    let name = issues.record { Shared(wrappedValue: "a", .inMemory("located-read-string")) }
    var seen: (Int, String)?
    let countLine = #line + 1
    count.withLock { value in
      value += 1
      seen = (count.wrappedValue, "")
    }
    let nameLine = #line + 1
    name.withLock { value in
      value += "b"
      seen?.1 = name.wrappedValue
      _ = name.isLoading
    }
    #expect(seen?.0 == 1)  // the value before the body started
    #expect(seen?.1 == "a")
    #expect(issues.issues.map(\.line) == [countLine, nameLine, nameLine])
    #expect(issues.issues.allSatisfy { $0.fileID == #fileID })
  }
}
