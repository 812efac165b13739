import Foundation
import TestSupport
import Testing
import Tether
import TetherHTTP

@Suite struct HTTPResourceKeyTests {
  static func key(
    _ client: HTTPClient, every interval: Duration = .seconds(60)
  )
    -> HTTPResourceKey<ItemPath, Item>
  {
    .http(Catalog.item, save: Catalog.replace, ItemPath(id: "1"), client: client, every: interval)
  }

  /// nginx answers a WebDAV PUT with 201 or 204 and no body.
  static let putIgnoringBody = Endpoint<ItemPath, Item, NoBody>.put("/items/{id}")

  @Test func aSaveSendsIfMatchWithTheLastETag() async throws {
    let server = try TestHTTPServer()
    let resource = WritableResource(json(Item(id: 1, name: "one")))
    server.serve(resource, at: "/items/1")
    let loaded = resource.document.etag
    @Shared(Self.key(HTTPClient(baseURL: server.baseURL))) var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    $item.withLock { $0.name = "mine" }
    try await waitUntil("the saved value") { resource.document.text.contains("mine") }
    let put = try #require(server.requests(at: "/items/1").first { $0.method == "PUT" })
    #expect(put.header("If-Match") == loaded)

    // The next save carries the tag of the version this process wrote.
    let written = resource.document.etag
    $item.withLock { $0.name = "mine again" }
    try await waitUntil("the second save") { resource.document.text.contains("mine again") }
    #expect(
      server.requests(at: "/items/1").last { $0.method == "PUT" }?.header("If-Match") == written)
    #expect($item.saveError == nil)
  }

  @Test func a412IsAConflictInSaveErrorAndTheNewerValueIsLoaded() async throws {
    let server = try TestHTTPServer()
    let resource = WritableResource(json(Item(id: 1, name: "one")))
    server.serve(resource, at: "/items/1")
    @Shared(Self.key(HTTPClient(baseURL: server.baseURL))) var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    resource.replace(with: json(Item(id: 1, name: "theirs")))  // another writer
    $item.withLock { $0.name = "mine" }
    try await waitUntil("the conflict") {
      if case .conflict? = $item.saveError as? HTTPError { return true } else { return false }
    }
    try await waitUntil("the newer value") { item.name == "theirs" }
    #expect(resource.document.text.contains("theirs"))
    #expect(resource.acceptedWrites == 0)
  }

  /// ARCHITECTURE.md, "Where versions are decided": a representation of someone else's that the key polled while the
  /// `withLock` body ran (its delivery waits for the lock) is not the base of the save: the
  /// save carries `If-Match` of the version the body started from, and is refused.
  @Test func aRepresentationPolledWhileTheBodyRunsMakesTheSaveAConflict() async throws {
    let server = try TestHTTPServer()
    let resource = WritableResource(json(Item(id: 1, name: "one")))
    server.serve(resource, at: "/items/1")
    let loaded = resource.document.etag
    @Shared(Self.key(HTTPClient(baseURL: server.baseURL), every: .milliseconds(20)))
    var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }
    $item.withLock { item in
      resource.replace(with: json(Item(id: 1, name: "theirs")))  // another writer
      // Runs until the key has polled the new representation (its answer is on the way).
      let gets = server.requests(at: "/items/1").count
      var deadline = ContinuousClock.now + .seconds(2)
      while server.requests(at: "/items/1").count == gets, ContinuousClock.now < deadline {}
      deadline = ContinuousClock.now + .milliseconds(100)
      while ContinuousClock.now < deadline {}
      item.name = "mine"
    }
    try await waitUntil("the conflict") {
      if case .conflict? = $item.saveError as? HTTPError { return true } else { return false }
    }
    let put = try #require(server.requests(at: "/items/1").first { $0.method == "PUT" })
    #expect(put.header("If-Match") == loaded)
    try await waitUntil("the newer value") { item.name == "theirs" }
    #expect(resource.document.text.contains("theirs"), "the stale change overwrote theirs")
    #expect(resource.acceptedWrites == 0)
  }

  @Test func updateIsExactAgainstAnotherWriterThroughRetriesOn412() async throws {
    let server = try TestHTTPServer()
    let resource = WritableResource(json(Item(id: 0, name: "counter")))
    server.serve(resource, at: "/items/1")
    // Two holders that do not share a reference: the same resource through two host names.
    @Shared(Self.key(HTTPClient(baseURL: server.baseURL))) var a = Item(id: -1, name: "")
    @Shared(Self.key(HTTPClient(baseURL: URL(string: "http://localhost:\(server.port)")!)))
    var b = Item(id: -1, name: "")
    try await waitUntil("both loaded") { a.id == 0 && b.id == 0 }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<20 {
        let holder = index.isMultiple(of: 2) ? $a : $b
        group.addTask { _ = try await holder.update { $0.id += 1 } }
      }
      try await group.waitForAll()
    }
    #expect(resource.document.text.contains(#""id":20"#))
    #expect(
      server.requests(at: "/items/1").contains {
        $0.method == "PUT" && $0.header("If-Match") != nil
      })
  }

  @Test(
    .enabled(
      if: NginxServer.executable != nil,
      "nginx is not installed; run Scripts/install-test-deps to include this integration test"))
  func getWithETagAnd304AndAPutRoundTripAgainstARealNginx() async throws {
    let nginx = try await NginxServer.start(acceptingPuts: true)
    try nginx.publish(json(Item(id: 1, name: "from nginx")), as: "items/1")
    let client = HTTPClient(baseURL: nginx.baseURL)
    @Shared(
      .http(
        Catalog.item, save: Self.putIgnoringBody, ItemPath(id: "1"), client: client,
        every: .milliseconds(50)))
    var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "from nginx" }
    // Conditional polls: nginx answers 304.
    try await waitUntil("nginx's 304s") {
      nginx.accessLog.contains { $0.hasPrefix("304 GET \"") }
    }
    $item.withLock { $0.name = "written by Tether" }
    try await waitUntil("the PUT on disk") {
      nginx.contents(of: "items/1")?.contains("written by Tether") == true
    }
    // nginx logs a request just after answering it.
    try await waitUntil("the PUT in the access log") {
      nginx.accessLog.contains { $0.split(separator: " ").dropFirst().first == "PUT" }
    }
    // Another writer changes the file: the polling holder sees it.
    try nginx.publish(json(Item(id: 1, name: "changed on the server")), as: "items/1")
    try await waitUntil("the server's change") { item.name == "changed on the server" }
    await nginx.stop()
  }
}
