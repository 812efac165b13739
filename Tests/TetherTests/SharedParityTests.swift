import Foundation
import Streams
import Synchronization
import Testing
import Tether
import TetherSupport
import TetherTesting

/// What a swift-sharing user reaches for: conformances, derived readers, collections, spellings.
@Suite(.isolatedSharedState)
struct SharedParityTests {
  struct Todo: Identifiable, Equatable, Sendable {
    let id: Int
    var title: String
    var isDone = false
  }

  struct State: Equatable {
    @Shared(.inMemory("count")) var count = 0
    @SharedReader(.inMemory("title")) var title = "hello"
  }

  @Test func stateHoldingSharedValuesIsEquatableByValue() {
    let state = State()
    let other = State()
    #expect(state == other)
    other.$count.withLock { $0 += 1 }  // same key: both see it
    #expect(state == other)
    let local = Shared(value: 1)
    #expect(local == Shared(value: 1))
    #expect(local != Shared(value: 2))
    #expect(SharedReader.constant("a") == SharedReader(value: "a"))
  }

  @Test func identifiableDescriptionAndMirrorShowTheValue() {
    let todo = Shared(value: Todo(id: 7, title: "write"))
    #expect(todo.id == 7)
    #expect(SharedReader(todo).id == 7)
    #expect(Shared(value: 42).description == "42")
    #expect(SharedReader.constant([1, 2]).description == "[1, 2]")
    #expect(Mirror(reflecting: todo).children.map(\.label) == ["id", "title", "isDone"])
    #expect(Mirror(reflecting: SharedReader(todo)).children.count == 3)
  }

  @Test func readDerivesAReaderOfAComputedMember() {
    @Shared(.inMemory("todos")) var todos = [Todo(id: 1, title: "a")]
    let count = $todos.read { $0.count }
    let counts = Lock<[Int]>([])
    let cancellable = count.publisher.sink { value in counts.withLock { $0.append(value) } }
    $todos.withLock { $0.append(Todo(id: 2, title: "b")) }
    $todos.withLock { $0[0].title = "A" }  // the count did not change: not re-announced
    #expect(count.wrappedValue == 2)
    #expect(counts.withLock { $0 } == [1, 2])
    #expect(SharedReader($todos).read(\.isEmpty).wrappedValue == false)
    withExtendedLifetime(cancellable) {}
  }

  @Test func constantReaderNeverChanges() {
    let reader = SharedReader.constant(3)
    #expect(reader.wrappedValue == 3)
    #expect(reader.read { $0 * 2 }.wrappedValue == 6)
  }

  @Test func elementByIDWritesThroughAndNilRemoves() {
    @Shared(.inMemory("todos")) var todos = [Todo(id: 1, title: "a"), Todo(id: 2, title: "b")]
    let second = $todos[id: 2]
    #expect(second.wrappedValue?.title == "b")
    second.withLock { $0?.isDone = true }
    #expect(todos[1].isDone)
    #expect($todos[id: 3].wrappedValue == nil)
    $todos[id: 3].withLock { $0 = Todo(id: 3, title: "c") }  // an absent id appends
    #expect(todos.map(\.id) == [1, 2, 3])
    second.withLock { $0 = nil }  // removes the element
    #expect(todos.map(\.id) == [1, 3])
    #expect(second.wrappedValue == nil)
  }

  @Test func arrayOfSharedElementsWritesThroughTheCollection() throws {
    @Shared(.inMemory("todos")) var todos = [Todo(id: 1, title: "a"), Todo(id: 2, title: "b")]
    let rows = Array($todos)
    #expect(rows.map(\.id) == [1, 2])
    rows[1].withLock { $0.title = "B" }
    #expect(todos[1].title == "B")
    $todos.withLock { $0.insert(Todo(id: 0, title: "first"), at: 0) }
    rows[0].withLock { $0.isDone = true }  // still its element by id, wherever it moved
    #expect(todos[1] == Todo(id: 1, title: "a", isDone: true))
    let unwrapped = try #require(Shared($todos[id: 2]))
    #expect(unwrapped.wrappedValue.title == "B")
  }

  @Test func inlineDefaultSpellingTypeChecksAsTheValueType() {
    @Shared(.inMemory("inline")[default: 55]) var value: Int
    let typed: Int = value  // `Int`, not `Int?`
    #expect(typed == 55)
    $value.withLock { $0 += 1 }
    @Shared(.inMemory("inline")) var same = 0
    #expect(same == 56)
    @SharedReader(.inMemory("inline-reader")[default: "x"]) var reader: String
    #expect(reader == "x")
  }

  @Test func portedSwiftSharingKeyWorksUnchanged() async throws {
    let store = KeyValueStore()
    @Shared(.keyValue("count", store: store)) var count = 0
    $count.withLock { $0 += 1 }
    #expect(store["count"] == Data("1".utf8))
    store["count"] = Data("41".utf8)  // an outside write reaches the holder
    #expect(count == 41)
    @Shared(.keyValue("count", store: store)) var same = 0  // a non-Sendable ID identifies it
    #expect(same == 41)
    store["count"] = nil
    #expect(count == 0)  // deleted: back to the declared default
    try await $count.load(.keyValue("other", store: store))
    $count.withLock { $0 = 5 }
    #expect(store["other"] == Data("5".utf8))
  }

  @Test func swiftSharingContinuationAndSubscriberSpellings() throws {
    let loaded = Lock<[Result<Int?, any Error>]>([])
    let load = LoadContinuation<Int>("a key") { result in loaded.withLock { $0.append(result) } }
    load.resume(returning: 3)
    let first = try loaded.withLock { try $0.first?.get() }
    #expect(first == 3)

    let saved = Lock(0)
    let save = SaveContinuation("a key", callback: { _ in saved.withLock { $0 += 1 } })
    save.resume()
    #expect(saved.withLock { $0 } == 1)

    let events = Lock<[String]>([])
    let subscriber = SharedSubscriber<Int>(
      callback: { result in events.withLock { $0.append("\((try? result.get()) as Int??)") } },
      onLoading: { loading in events.withLock { $0.append("loading \(loading)") } })
    subscriber.yieldLoading(true)
    subscriber.yield(1)
    subscriber.yieldReturningInitialValue()
    #expect(
      events.withLock { $0 } == ["loading true", "Optional(Optional(1))", "Optional(nil)"])
  }

  @Test func misuseReportNamesTheKeysDescription() {
    let issues = TetherIssueRecorder()
    issues.record {
      let load = LoadContinuation<Int>("my.key") { _ in }
      load.resume(returning: 1)
      load.resume(returning: 2)
    }
    #expect(issues.messages.first?.contains("'my.key'") == true)
  }
}
