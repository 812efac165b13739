import Foundation
import Streams
import TestSupport
import Testing
import TetherSupport
import TetherURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct DataTaskPublisherTests {
  @Test func publishesTheDataAndResponseOnDemandThenFinishes() async throws {
    let server = try TestHTTPServer()
    server.setDocument(#"{"ok":true}"#, at: "/status")
    let publisher = URLSession.shared.dataTaskPublisher(for: server.url(for: "/status"))
    #expect(server.requestCount == 0)  // nothing happens before a subscriber asks
    let received = Lock<[String]>([])
    let cancellable = publisher.sink(
      receiveCompletion: { completion in
        received.withLock { $0.append("\(completion)") }
      },
      receiveValue: { data, response in
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        received.withLock { $0.append("\(status) \(String(decoding: data, as: UTF8.self))") }
      })
    try await waitUntil("the value and the completion") { received.withLock { $0.count } == 2 }
    #expect(received.withLock { $0 } == [#"200 {"ok":true}"#, "finished"])
    cancellable.cancel()
  }

  @Test func cancellingCancelsTheTask() async throws {
    let server = try TestHTTPServer()
    let stream = HTTPStream()
    server.inject(.stream(stream), at: "/slow")
    let received = Lock(0)
    let cancellable = URLSession.shared.dataTaskPublisher(for: server.url(for: "/slow"))
      .sink(receiveCompletion: { _ in received.withLock { $0 += 1 } }, receiveValue: { _ in })
    try await stream.waitForClients(1)
    cancellable.cancel()
    try await stream.waitForNoClients()
    #expect(received.withLock { $0 } == 0)
  }

  @Test func aFailureIsAURLError() async throws {
    let closed = try TestHTTPServer()
    let url = closed.url(for: "/x")
    closed.stop()
    let failure = Lock<URLError?>(nil)
    let cancellable = URLSession.shared.dataTaskPublisher(for: url)
      .sink(
        receiveCompletion: { completion in
          if case .failure(let error) = completion { failure.withLock { $0 = error } }
        }, receiveValue: { _ in })
    try await waitUntil("the failure") { failure.withLock { $0 } != nil }
    cancellable.cancel()
  }
}
