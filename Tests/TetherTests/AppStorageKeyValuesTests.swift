import Foundation
import TestSupport
import Testing
import Tether
import TetherTesting

/// `.appStorage` values that other code writes with `UserDefaults.set(_:forKey:)` reach the
/// holder, and every value type swift-sharing's `.appStorage` takes is taken here too.
@Suite(.isolatedSharedState) struct AppStorageKeyValuesTests {
  @Test func stringArraysAreStoredAsPropertyListArrays() {
    let defaults = SharedStorage.current.defaults
    @Shared(.appStorage("tags")) var tags = ["swift"]
    @Shared(.appStorage("recent")) var recent: [String]? = nil
    $tags.withLock { $0.append("linux") }
    $recent.withLock { $0 = ["a.txt", "b.txt"] }
    #expect(defaults.stringArray(forKey: "tags") == ["swift", "linux"])
    #expect(defaults.stringArray(forKey: "recent") == ["a.txt", "b.txt"])
    $recent.withLock { $0 = nil }
    #expect(defaults.object(forKey: "recent") == nil)
  }

  @Test func aStringArraySeededByOtherCodeLoads() {
    let defaults = SharedStorage.current.defaults
    defaults.set(["one", "two"], forKey: "tags")
    defaults.set([1, 2], forKey: "numbers")
    @Shared(.appStorage("tags")) var tags: [String] = []
    @Shared(.appStorage("numbers")) var numbers: [String]? = ["default"]
    #expect(tags == ["one", "two"])
    #expect(numbers == ["default"])  // not an array of strings
  }

  /// swift-sharing's test shape: the holder exists, other code sets the entry, the holder
  /// shows it at once.
  @Test func aValueOtherCodeSetsReachesTheHolderAtOnce() {
    let defaults = SharedStorage.current.defaults
    @Shared(.appStorage("data")) var data = Data([4, 2])
    @Shared(.appStorage("date")) var date = Date(timeIntervalSinceReferenceDate: 0)
    @Shared(.appStorage("url")) var url = URL(fileURLWithPath: "/dev")
    @Shared(.appStorage("tags")) var tags = ["Blob"]
    @Shared(.appStorage("count")) var count = 0
    defaults.set(Data([1, 7, 2, 9]), forKey: "data")
    defaults.set(Date(timeIntervalSince1970: 0), forKey: "date")
    defaults.set(URL(fileURLWithPath: "/tmp"), forKey: "url")
    defaults.set(["Blob", "Blob, Jr."], forKey: "tags")
    defaults.set(1729, forKey: "count")
    #expect(data == Data([1, 7, 2, 9]))
    #expect(date == Date(timeIntervalSince1970: 0))
    #expect(url == URL(fileURLWithPath: "/tmp"))
    #expect(tags == ["Blob", "Blob, Jr."])
    #expect(count == 1729)
    defaults.removeObject(forKey: "count")
    #expect(count == 0)
  }

  @Test func urlsOtherCodeStoresLoad() {
    let defaults = SharedStorage.current.defaults
    defaults.set(URL(fileURLWithPath: "/tmp/a file.txt"), forKey: "file")
    defaults.set(URL(string: "https://tether.dev/docs?q=1")!, forKey: "web")
    defaults.set("https://tether.dev/docs?q=1", forKey: "webString")
    @Shared(.appStorage("file")) var file = URL(fileURLWithPath: "/")
    @Shared(.appStorage("webString")) var webString: URL? = nil
    #expect(file == URL(fileURLWithPath: "/tmp/a file.txt"))
    #expect(webString == URL(string: "https://tether.dev/docs?q=1"))
  }

  @Test func urlsAreStoredInAFormUserDefaultsReadsBack() {
    let defaults = SharedStorage.current.defaults
    @Shared(.appStorage("file")) var file = URL(fileURLWithPath: "/")
    @Shared(.appStorage("web")) var web = URL(string: "https://example.com")!
    $file.withLock { $0 = URL(fileURLWithPath: "/tmp/a file.txt") }
    $web.withLock { $0 = URL(string: "https://tether.dev/docs?q=1")! }
    // A file URL as its path: what `url(forKey:)` reads as a file URL on every platform.
    #expect(defaults.url(forKey: "file") == URL(fileURLWithPath: "/tmp/a file.txt"))
    // Any other URL whole, as its absolute string.
    #expect(defaults.string(forKey: "web") == "https://tether.dev/docs?q=1")
  }

  @Test func anotherInstanceOfAPersistedSuiteReachesTheHolder() async throws {
    let suite = "tether-tests-\(UUID().uuidString)"
    defer { AppStorageKeyCrossProcessTests.removeFiles(of: suite) }
    let store = try #require(UserDefaults(suiteName: suite))
    @Shared(.appStorage("data", store: store)) var data = Data()
    @Shared(.appStorage("date", store: store)) var date = Date(timeIntervalSince1970: 0)
    @Shared(.appStorage("url", store: store)) var url = URL(fileURLWithPath: "/")
    @Shared(.appStorage("tags", store: store)) var tags: [String] = []
    let other = try #require(UserDefaults(suiteName: suite))
    other.set(Data([1, 2, 3]), forKey: "data")
    other.set(Date(timeIntervalSince1970: 1_000_000), forKey: "date")
    other.set(URL(fileURLWithPath: "/var/tmp"), forKey: "url")
    other.set(["x", "y"], forKey: "tags")
    #expect(other.synchronize())
    try await waitUntil("the other instance's values") {
      data == Data([1, 2, 3]) && date == Date(timeIntervalSince1970: 1_000_000)
        && url == URL(fileURLWithPath: "/var/tmp") && tags == ["x", "y"]
    }
  }
}
