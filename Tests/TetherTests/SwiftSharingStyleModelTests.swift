import Foundation
import Observation
import Testing
import Tether

// A model and its tests in the shape swift-sharing users write them (issue 33): an
// `@Observable` model with a file at the user's real Documents path and an `.appStorage` flag,
// and tests with no trait and no set-up. In a process running tests, Tether keeps both in
// memory, so these tests neither read nor write the user's file or defaults.
//
// How far that goes without a trait: every test of the process shares one in-memory store
// and one set of references (the process scope), as every view of an app shares them. A test
// never touches the disk or `UserDefaults.standard`, and parallel tests that each look only at
// their own entries pass, as these do; but a value one test leaves behind is visible to
// another test that uses the same key. Tests that assert a key's whole value from a clean
// start add `@Suite(.isolatedSharedState)`, which gives each test its own store.

struct SharingStyleSyncUp: Codable, Equatable, Identifiable, Sendable {
  var id = UUID()
  var title: String
}

extension URL {
  /// Where the app keeps its sync-ups: the user's real Documents directory.
  static let sharingStyleSyncUps = FileManager.default.homeDirectoryForCurrentUser
    .appending(path: "Documents/tether-sharing-style-sync-ups.json")
}

@Observable
final class SharingStyleSyncUpsModel {
  @ObservationIgnored @Shared(.fileStorage(.sharingStyleSyncUps)) var syncUps:
    [SharingStyleSyncUp] = []
  @ObservationIgnored @Shared(.appStorage("tether-sharing-style-onboarded")) var hasOnboarded =
    false

  @discardableResult
  func addSyncUp(title: String) -> SharingStyleSyncUp {
    let syncUp = SharingStyleSyncUp(title: title)
    $syncUps.withLock { $0.append(syncUp) }
    return syncUp
  }

  func delete(_ id: SharingStyleSyncUp.ID) {
    $syncUps.withLock { $0.removeAll { $0.id == id } }
  }

  func finishOnboarding() {
    $hasOnboarded.withLock { $0 = true }
  }
}

/// The user's file, as it was: whether it exists, and its bytes.
private func userFile() -> Data? {
  FileManager.default.contents(atPath: URL.sharingStyleSyncUps.path)
}

struct SwiftSharingStyleModelTests {
  @Test func addingASyncUpSavesItWithoutTouchingTheUsersFile() async throws {
    let before = userFile()
    let model = SharingStyleSyncUpsModel()
    let syncUp = model.addSyncUp(title: "Design")
    #expect(model.syncUps.contains(syncUp))
    try await model.$syncUps.save()
    #expect(model.$syncUps.saveError == nil)
    #expect(userFile() == before)
    // The save went to the test process's in-memory files, where a test can inspect it.
    let stored = try #require(SharedStorage.current.files?.contents(of: .sharingStyleSyncUps))
    #expect(try JSONDecoder().decode([SharingStyleSyncUp].self, from: stored).contains(syncUp))
  }

  @Test func twoModelsShareTheValueAsInTheApp() {
    let list = SharingStyleSyncUpsModel()
    let detail = SharingStyleSyncUpsModel()
    let syncUp = list.addSyncUp(title: "Standup")
    #expect(detail.syncUps.contains(syncUp))
    detail.delete(syncUp.id)
    #expect(!list.syncUps.contains(syncUp))
  }

  @Test func onboardingIsRememberedWithoutTouchingTheUsersDefaults() {
    let key = "tether-sharing-style-onboarded"
    #expect(UserDefaults.standard.object(forKey: key) == nil)
    let model = SharingStyleSyncUpsModel()
    model.finishOnboarding()
    #expect(SharingStyleSyncUpsModel().hasOnboarded)
    #expect(SharedStorage.current.defaults.bool(forKey: key))
    #expect(UserDefaults.standard.object(forKey: key) == nil)
  }

  /// Sixteen tests at once, each adding and deleting its own sync-up: each sees its own
  /// changes, none loses one, and the user's file stays as it was.
  @Test(arguments: 0..<16) func parallelTestsEachSeeTheirOwnChanges(index: Int) async throws {
    let before = userFile()
    let model = SharingStyleSyncUpsModel()
    let syncUp = model.addSyncUp(title: "Meeting \(index)")
    #expect(model.syncUps.filter { $0.id == syncUp.id } == [syncUp])
    try await model.$syncUps.save()
    model.delete(syncUp.id)
    #expect(!model.syncUps.contains(syncUp))
    try await model.$syncUps.save()
    #expect(userFile() == before)
  }
}
