import Foundation
import TestSupport
import Testing

@testable import TetherHTTP

#if canImport(Glibc)
import Glibc
#endif

/// Resolving and connecting on a real event loop, with the address list injected through a
/// resolver whose lookup returns fixed loopback addresses.
@Suite struct TCPConnectorTests {
  /// A resolver that answers every name with `addresses` (a fixed list standing in for DNS).
  private func fixedResolver(_ addresses: [SocketAddress]) -> Resolver {
    Resolver(maximumThreads: 1) { _, _ in .success(addresses) }
  }

  private func loopback(_ port: UInt16) -> SocketAddress {
    SocketAddress.numeric("127.0.0.1", port: Int(port))![0]
  }

  private let route = ConnectionRoute.to(URL(string: "http://name.test/")!, proxy: nil, tls: nil)

  /// Connects to `name.test` through `resolver`; the result and how long the connector took.
  ///
  /// The time is measured on the event loop's thread, from the connector's start to its
  /// answer: not when this test's task resumes, which on two loaded cores can be seconds
  /// later and says nothing about the connector.
  private func connect(
    resolver: Resolver, connectTimeout: Double
  ) async throws -> (Result<Int32, HTTPError>, Duration) {
    let loop = try #require(EventLoopGroup.shared).nextLoop()
    let holder = ConnectorHolder()
    let clock = ContinuousClock()
    return await withCheckedContinuation { continuation in
      loop.execute {
        let start = clock.now
        let connector = TCPConnector(loop: loop, route: route, resolver: resolver)
        holder.connector = connector
        let deadline = Monotonic.deadline(after: connectTimeout)
        // The owner's connect timer, as the connection arms it: it cancels the connector.
        let timer = loop.schedule(at: deadline) {
          connector.cancel()
          continuation.resume(
            returning: (
              Result<Int32, HTTPError>.failure(.timedOut(url: "", after: connectTimeout)),
              clock.now - start
            ))
        }
        connector.start(deadline: deadline) { result in
          loop.cancel(timer)
          continuation.resume(returning: (result, clock.now - start))
        }
      }
    }
  }

  @Test func aBlackHoledFirstAddressDoesNotUseUpTheConnectTimeout() async throws {
    // The first address is a loopback listener whose full accept queue drops every SYN (a
    // black hole, as an unroutable IPv6 address is); the second is a real server.
    let blackhole = try await Blackhole.start()
    let server = try TestHTTPServer()
    let resolver = fixedResolver([loopback(blackhole.port), loopback(server.port)])
    let (result, elapsed) = try await connect(resolver: resolver, connectTimeout: 10)
    let descriptor = try result.get()
    defer { closeDescriptor(descriptor) }
    // Connected to the server, about 250 ms after the black-holed attempt started.
    var peer = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &peer) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
    }
    #expect(UInt16(bigEndian: peer.sin_port) == server.port)
    // Well under the 10 s the old address loop used up: about the 250 ms attempt delay.
    #expect(elapsed < .seconds(5), "connecting took \(elapsed) with a 10 s connect timeout")
  }

  @Test func everyAddressRefusedFailsWithTheReason() async throws {
    let closed = try Blackhole.closedPort()
    let resolver = fixedResolver([loopback(closed), loopback(closed)])
    let (result, elapsed) = try await connect(resolver: resolver, connectTimeout: 10)
    #expect(throws: HTTPError.unreachable(url: "http://name.test", reason: "connection refused")) {
      try result.get()
    }
    #expect(elapsed < .seconds(5), "\(elapsed) with a 10 s connect timeout")
  }

  @Test func aBlackHoledAddressEndsAtItsShareOfTheTimeoutWhenNothingElseAnswers() async throws {
    let blackhole = try await Blackhole.start()
    let closed = try Blackhole.closedPort()
    let resolver = fixedResolver([loopback(blackhole.port), loopback(closed)])
    // Two addresses share 16 s: the black-holed one is given up after 8 s, not 16 s.
    let (result, elapsed) = try await connect(resolver: resolver, connectTimeout: 16)
    #expect(throws: HTTPError.unreachable(url: "http://name.test", reason: "connection timed out"))
    {
      try result.get()
    }
    #expect(elapsed >= .milliseconds(7900) && elapsed < .seconds(12), "\(elapsed)")
  }

  @Test func aNameWithoutAddressesFailsAsHostNotFound() async throws {
    let resolver = Resolver(maximumThreads: 1) { host, _ in
      .failure(.unreachable(url: host, reason: "host not found"))
    }
    let (result, _) = try await connect(resolver: resolver, connectTimeout: 1)
    #expect(throws: HTTPError.unreachable(url: "http://name.test", reason: "host not found")) {
      try result.get()
    }
  }
}

/// Keeps a connector alive until it reports (it is confined to its loop).
private final class ConnectorHolder: @unchecked Sendable {
  // @unchecked Sendable: written once, on the connector's loop, and never read.
  var connector: TCPConnector?
}

extension Blackhole {
  /// A loopback port nobody listens on: bound, then closed.
  static func closedPort() throws -> UInt16 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { _ = close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr = in_addr(s_addr: in_addr_t(0x7f00_0001).bigEndian)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
      }
    }
    try #require(bound)
    return UInt16(bigEndian: address.sin_port)
  }
}
