import Dispatch
import Foundation
import TestSupport
import Testing
import Tether
import TetherHTTP

/// The version rules of a writable `.http` key (CallingHTTPAPIs, "Versions and conflicts"),
/// against a real loopback server that honours `If-Match` and `If-None-Match: *`.
@Suite struct HTTPResourceKeyVersionTests {
  /// The same resource for every `writer`: the query makes each writer's key its own
  /// reference, as another process's would be.
  struct WriterPath: Encodable, Hashable, Sendable {
    var id = "1"
    var writer: Int
  }

  static let read = Endpoint<WriterPath, NoBody, Item>.get("/items/{id}")
  static let write = Endpoint<WriterPath, Item, Item>.put("/items/{id}")

  static func key(
    _ server: TestHTTPServer, writer: Int = 0, every interval: Duration = .seconds(60)
  ) -> HTTPResourceKey<WriterPath, Item> {
    .http(
      read, save: write, WriterPath(writer: writer), client: HTTPClient(baseURL: server.baseURL),
      every: interval)
  }

  /// Issue #32, defect 5: equal writers used to retry 412s in lockstep and give up with
  /// `conflict` after 16 attempts. With jittered back-off every increment lands, every round.
  @Test func fourWritersNeverLoseAnIncrement() async throws {
    let server = try TestHTTPServer()
    let resource = WritableResource(json(Item(id: 0, name: "counter")))
    server.serve(resource, at: "/items/1")
    let perWriter = 25
    for round in 1...4 {
      let writers = (0..<4).map { writer in
        Shared(wrappedValue: Item(id: -1, name: ""), Self.key(server, writer: writer + 4 * round))
      }
      try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in writers {
          group.addTask {
            for _ in 0..<perWriter { _ = try await writer.update { $0.id += 1 } }
          }
        }
        try await group.waitForAll()
      }
      let expected = 4 * perWriter * round
      #expect(resource.document.text.contains(#""id":\#(expected)"#), "round \(round)")
      #expect(resource.acceptedWrites == expected)
    }
  }

  /// Issue #32, defect 5: a writer that loses twenty rounds in a row to another writer keeps
  /// trying (with back-off, within the deadline) instead of throwing `conflict` after 16.
  @Test func anUpdateThatLosesTwentyRoundsStillLands() async throws {
    let server = try TestHTTPServer()
    let resource = WritableResource(json(Item(id: 0, name: "counter")))
    let rounds = Rounds()
    server.setHandler(at: "/items/1") { request in
      // Another writer's increment lands just before each of the first 20 writes.
      if request.method == "PUT", rounds.next() <= 20 {
        let current = try! JSONDecoder().decode(Item.self, from: resource.document.body)
        resource.replace(with: json(Item(id: current.id + 1, name: "counter")))
      }
      return resource.respond(to: request)
    }
    let counter = Shared(wrappedValue: Item(id: -1, name: ""), Self.key(server))
    let stored = try await counter.update {
      $0.id += 1; return $0.id
    }
    #expect(stored == 21)
    #expect(resource.document.text.contains(#""id":21"#))
    #expect(resource.acceptedWrites == 1)
  }

  /// Issue #32, deliver 2: a change made before the first load answered is derived from
  /// "nothing seen", so it is written only if the resource is still absent.
  @Test func aChangeBeforeTheFirstLoadAnsweredIsWrittenOnlyIfAbsent() async throws {
    let server = try TestHTTPServer()
    let resource = WritableResource(json(Item(id: 1, name: "stored")))
    let gets = Gate()
    gets.arm()
    server.setHandler(at: "/items/1") { request in
      let response = resource.respond(to: request)
      if request.method == "GET" { gets.holdIfArmed() }
      return response
    }
    defer { gets.release() }
    @Shared(Self.key(server)) var item = Item(id: 0, name: "default")
    try await waitUntil("the first GET, held") { gets.isHolding }
    $item.withLock { $0.name = "mine" }
    try await waitUntil("the PUT") {
      server.requests(at: "/items/1").contains { $0.method == "PUT" }
    }
    let put = try #require(server.requests(at: "/items/1").first { $0.method == "PUT" })
    #expect(put.header("If-None-Match") == "*")
    #expect(put.header("If-Match") == nil)
    gets.release()
    try await waitUntil("the conflict") {
      if case .conflict? = $item.saveError as? HTTPError { return true } else { return false }
    }
    try await waitUntil("the stored value") { item.name == "stored" }
    #expect(resource.acceptedWrites == 0, "the unseen stored value was overwritten")
  }

  /// A resource that does not exist yet (404) is created with `If-None-Match: *`.
  @Test func anAbsentResourceIsCreatedOnlyIfStillAbsent() async throws {
    let server = try TestHTTPServer()
    let resource = WritableResource(json(Item(id: 0, name: "")))
    resource.remove()
    server.serve(resource, at: "/items/1")
    @Shared(Self.key(server)) var item = Item(id: 0, name: "default")
    try await waitUntil("the 404") { $item.loadError != nil }
    $item.withLock { $0.name = "created" }
    try await $item.save()
    #expect(resource.exists)
    #expect(resource.document.text.contains("created"))
    let put = try #require(server.requests(at: "/items/1").first { $0.method == "PUT" })
    #expect(put.header("If-None-Match") == "*")

    // Another writer created it first: the next creator's save is a conflict, not an overwrite.
    let other = Shared(wrappedValue: Item(id: 0, name: "default"), Self.key(server, writer: 1))
    resource.remove()
    try await waitUntil("the other holder's 404") { other.loadError != nil }
    resource.replace(with: json(Item(id: 7, name: "theirs")))
    other.withLock { $0.name = "late" }
    await #expect(throws: HTTPError.self) { try await other.save() }
    #expect(resource.document.text.contains("theirs"))
    try await waitUntil("the newer value") { other.wrappedValue.name == "theirs" }
  }

  /// Issue #32, deliver 8: a poll sent while this key's own save was in flight, and answered
  /// after a later save landed, carries a representation older than the holder's. The holder
  /// neither goes back to it nor has its own write reported again as a change afterwards.
  @Test func aPollOlderThanALandedSaveNeverTakesTheValueBack() async throws {
    let server = try TestHTTPServer()
    let resource = WritableResource(json(Item(id: 1, name: "one")))
    let gets = Gate()
    let puts = Gate()
    server.setHandler(at: "/items/1") { request in
      let response = resource.respond(to: request)
      if request.method == "GET" { gets.holdIfArmed() }
      if request.method == "PUT" { puts.holdIfArmed() }
      return response
    }
    defer {
      gets.release()
      puts.release()
    }
    @Shared(Self.key(server, every: .milliseconds(10))) var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    let seen = Names()
    let cancellable = $item.publisher.sink { seen.append($0.name) }
    defer { cancellable.cancel() }

    // The first save is stored, and its answer held.
    puts.arm()
    $item.withLock { $0.name = "a" }
    try await waitUntil("the first save stored, its answer held") { puts.isHolding }
    // A poll (conditional on the loaded version) reads the first save's representation.
    gets.arm()
    try await waitUntil("a poll read \"a\" and is held") { gets.isHolding }
    puts.release()
    // A second save lands after the first; then the poll's answer arrives.
    $item.withLock { $0.name = "b" }
    try await $item.save()
    #expect(resource.document.text.contains(#""name":"b""#))
    gets.release()
    // Three more polls answered after the stale one: an echo would have arrived by then.
    let polled = server.requestCount(at: "/items/1")
    try await waitUntil("later polls") { server.requestCount(at: "/items/1") >= polled + 4 }
    #expect(item.name == "b")
    #expect(seen.all == ["one", "a", "b"])
    #expect($item.saveError == nil)
  }
}

/// Counts the rounds a server handler plays.
private final class Rounds: Sendable {
  private let count = LockedState(0)
  func next() -> Int {
    count.withLock {
      $0 += 1
      return $0
    }
  }
}

/// The names a holder's publisher emitted, in order.
private final class Names: Sendable {
  private let names = LockedState<[String]>([])
  func append(_ name: String) { names.withLock { $0.append(name) } }
  var all: [String] { names.withLock { $0 } }
}

/// Holds the server's next `GET` (after its answer was taken) until released.
private final class Gate: Sendable {
  private struct State {
    var armed = false
    var holding = false
  }
  private let state = LockedState(State())
  private let released = DispatchSemaphore(value: 0)

  func arm() { state.withLock { $0.armed = true } }

  var isHolding: Bool { state.withLock { $0.holding } }

  /// Called on the server's connection thread.
  func holdIfArmed() {
    let hold = state.withLock { state in
      defer { state.armed = false }
      state.holding = state.armed
      return state.armed
    }
    guard hold else { return }
    _ = released.wait(timeout: .now() + 10)
  }

  func release() {
    let wasHolding = state.withLock { state in
      defer { state.holding = false }
      return state.holding
    }
    if wasHolding { released.signal() }
  }
}

extension HTTPResourceKeyVersionTests {
  /// A save answered without a representation (`204`, as nginx's WebDAV module answers) is read
  /// back for its version. When another writer's change lands between the write and that read,
  /// the read-back is theirs, not ours: the holders take it instead of keeping their own value
  /// over a version that is not it (it was then never delivered: later polls answered 304).
  @Test func aChangeLandingBetweenAWriteAndItsReadBackReachesTheHolders() async throws {
    let server = try TestHTTPServer()
    let resource = WritableResource(json(Item(id: 1, name: "one")))
    server.setHandler(at: "/items/1") { request in
      guard request.method == "PUT" else { return resource.respond(to: request) }
      let answer = resource.respond(to: request)
      guard answer.status < 300 else { return answer }
      // Another writer, right after ours landed; our answer carries no representation.
      _ = resource.replace(with: json(Item(id: 1, name: "theirs")))
      return HTTPResponse(status: 204)
    }
    @Shared(
      .http(
        Self.read, save: Endpoint<WriterPath, Item, NoBody>.put("/items/{id}"),
        WriterPath(writer: 0), client: HTTPClient(baseURL: server.baseURL),
        every: .seconds(60)))
    var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    $item.withLock { $0.name = "mine" }
    try await waitUntil("the other writer's change") { item.name == "theirs" }
    #expect($item.saveError == nil)
    #expect(resource.document.text.contains("theirs"))
  }
}
