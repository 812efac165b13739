import Foundation
import TestSupport
import Testing

@testable import TetherHTTP

#if canImport(Glibc)
import Glibc
#endif

/// Real handshakes and GETs against nginx over TLS, with certificates made at test time,
/// driven by `PollingTLSClient` (poll(2) on the socket, then a step of the session), the way
/// the engine's loop will drive a session.
@Suite(
  "TLS sessions against nginx",
  .enabled(
    if: NginxServer.executable != nil && TestCertificateAuthority.executable != nil,
    "nginx or openssl is not installed; run Scripts/install-test-deps"),
  .enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "libssl.so.3 cannot be loaded"),
  // One at a time, and heavy: the handshakes, the trust-store reads and the poll(2) loops
  // block the test's thread, and the whole suite runs on two cooperative threads in CI.
  .serialized, .heavy)
struct TLSSessionTests {
  let authority: TestCertificateAuthority

  /// Takes the process's test authority and its certificates (made once, off the pool).
  init() async throws {
    authority = try await TestCertificateAuthority.shared()
  }

  @Test(arguments: ["127.0.0.1", "localhost"])
  func aTrustedServerAnswersAGet(host: String) async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish("hello over TLS", as: "hello.txt")
    let context = try TLSContext(trustedCertificates: [authority.certificatePEM])
    let client = try PollingTLSClient(port: nginx.port, host: host, context: context)
    try await client.handshake()
    #expect(client.session.negotiatedProtocol == "http/1.1")
    let response = try await client.get("/hello.txt")
    #expect(response.status == 200)
    #expect(response.body == "hello over TLS")
    client.close()
    await nginx.stop()
  }

  @Test func aServerOfAnAuthorityNotTrustedIsRefused() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    let context = try TLSContext()  // the system store only: our CA is unknown to it
    let failure = try await handshakeFailure(port: nginx.port, host: "127.0.0.1", context)
    guard case .certificateUntrusted = failure else {
      Issue.record("expected an untrusted certificate, got \(String(describing: failure))")
      return
    }
    #expect(
      failure?.httpError(url: "https://127.0.0.1")
        == .unreachable(
          url: "https://127.0.0.1",
          reason: FailureReason(
            "certificate not trusted (self-signed or unknown issuer)",
            tlsRefusal: .certificateUntrusted)))
    await nginx.stop()
  }

  @Test(arguments: ["localhost", "127.0.0.1"])
  func aCertificateForAnotherHostIsRefused(host: String) async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.otherHostServer)
    let context = try TLSContext(trustedCertificates: [authority.certificatePEM])
    let failure = try await handshakeFailure(port: nginx.port, host: host, context)
    #expect(failure == .certificateHostMismatch)
    #expect(failure?.reason == "certificate is for another host")
    await nginx.stop()
  }

  @Test func anExpiredCertificateIsRefused() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.expiredServer)
    let context = try TLSContext(trustedCertificates: [authority.certificatePEM])
    let failure = try await handshakeFailure(port: nginx.port, host: "localhost", context)
    #expect(failure == .certificateExpired)
    #expect(failure?.reason == "certificate expired")
    await nginx.stop()
  }

  @Test func aServerRequiringAClientCertificateRefusesAClientWithoutOne() async throws {
    let nginx = try await NginxTLSServer.start(
      certificate: authority.server, clientCertificateAuthority: authority.authority)
    try nginx.publish("members only", as: "secret.txt")
    let context = try TLSContext(trustedCertificates: [authority.certificatePEM])
    let client = try PollingTLSClient(port: nginx.port, host: "localhost", context: context)
    // nginx asks for a certificate but checks its absence after the handshake: HTTP 400.
    try await client.handshake()
    let response = try await client.get("/secret.txt")
    #expect(response.status == 400)
    #expect(response.body.contains("No required SSL certificate was sent"))
    #expect(!response.body.contains("members only"))
    client.close()
    await nginx.stop()
  }

  @Test func aClientCertificateOpensAServerThatRequiresOne() async throws {
    let nginx = try await NginxTLSServer.start(
      certificate: authority.server, clientCertificateAuthority: authority.authority)
    try nginx.publish("members only", as: "secret.txt")
    let context = try TLSContext(
      trustedCertificates: [authority.certificatePEM],
      clientIdentity: .init(
        certificatePEM: authority.client.certificatePEM, privateKeyPEM: authority.client.keyPEM))
    let client = try PollingTLSClient(port: nginx.port, host: "localhost", context: context)
    try await client.handshake()
    let response = try await client.get("/secret.txt")
    #expect(response.status == 200)
    #expect(response.body == "members only")
    client.close()
    await nginx.stop()
  }

  @Test func anIdleConnectionReadsSessionTicketsAsNothing() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish("still here", as: "idle.txt")
    let context = try TLSContext(trustedCertificates: [authority.certificatePEM])
    let client = try PollingTLSClient(port: nginx.port, host: "localhost", context: context)
    try await client.handshake()
    // TLS 1.3 tickets arrive after the handshake: readable, yet nothing for HTTP.
    #expect(await client.waitUntilReadable())
    var buffer = [UInt8](repeating: 0, count: 1024)
    #expect(buffer.withUnsafeMutableBytes { client.session.read(into: $0) } == .wantRead)
    let response = try await client.get("/idle.txt")
    #expect(response.status == 200 && response.body == "still here")
    client.close()
    await nginx.stop()
  }

  @Test func aWriteOnAClosedSocketFailsWithoutKillingTheProcess() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    let context = try TLSContext(trustedCertificates: [authority.certificatePEM])
    let client = try PollingTLSClient(port: nginx.port, host: "localhost", context: context)
    try await client.handshake()
    // write(2) on a socket shut for writing raises SIGPIPE, which kills an unguarded process.
    _ = Glibc.shutdown(client.descriptor, Int32(SHUT_WR))
    let request = Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
    let result = request.withUnsafeBytes { client.session.write($0) }
    guard case .failed(.connectionFailed(let reason)) = result else {
      Issue.record("expected a failed write, got \(result)")
      return
    }
    #expect(reason.localizedCaseInsensitiveContains("pipe"))
    client.close()
    await nginx.stop()
  }

  /// A new connection (TCP connect, handshake, GET) against a GET on a kept-alive one, 10
  /// times each; the medians are printed for the engine issue's closing note.
  @Test func aNewConnectionCostsAHandshakeAReusedOneDoesNot() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish(String(repeating: "x", count: 1024), as: "1k.txt")
    let clock = ContinuousClock()
    let rounds = 10
    // A context reads the system trust store: made once per client configuration.
    var contexts: [Duration] = []
    for _ in 0..<2 {
      let start = clock.now
      _ = try TLSContext(trustedCertificates: [authority.certificatePEM])
      contexts.append(clock.now - start)
    }
    let context = try TLSContext(trustedCertificates: [authority.certificatePEM])
    var handshakes: [Duration] = []
    var fresh: [Duration] = []
    for _ in 0..<rounds {
      let start = clock.now
      let client = try PollingTLSClient(port: nginx.port, host: "localhost", context: context)
      try await client.handshake()
      handshakes.append(clock.now - start)
      let response = try await client.get("/1k.txt")
      fresh.append(clock.now - start)
      #expect(response.status == 200)
      client.close()
    }
    let client = try PollingTLSClient(port: nginx.port, host: "localhost", context: context)
    try await client.handshake()
    var reused: [Duration] = []
    for _ in 0..<rounds {
      let start = clock.now
      let response = try await client.get("/1k.txt")
      reused.append(clock.now - start)
      #expect(response.status == 200 && response.body.utf8.count == 1024)
    }
    client.close()
    await nginx.stop()
    func median(_ values: [Duration]) -> Double {
      let sorted = values.sorted()
      let middle = sorted[sorted.count / 2]
      return Double(middle.components.attoseconds) / 1e15 + Double(middle.components.seconds) * 1e3
    }
    print(
      """
      TLS cost over \(rounds) rounds (medians): new TLSContext \(median(contexts)) ms; \
      connect + handshake \(median(handshakes)) ms; \
      new connection + GET 1 KiB \(median(fresh)) ms; GET 1 KiB on a kept-alive connection \
      \(median(reused)) ms
      """)
    #expect(median(reused) < median(fresh))
  }

  private func handshakeFailure(
    port: UInt16, host: String, _ context: TLSContext
  ) async throws -> TLSFailure? {
    let client = try PollingTLSClient(port: port, host: host, context: context)
    defer { client.close() }
    do {
      try await client.handshake()
      Issue.record("the handshake succeeded")
      return nil
    } catch let failure as TLSFailure {
      return failure
    }
  }
}

/// A client over a ``TLSSession`` that waits with poll(2) for what the session asks for, then
/// steps it again. HTTP/1.1 only as far as these tests need (Content-Length bodies).
///
/// Its waits block, so each step that waits (``handshake()``, ``get(_:)``,
/// ``waitUntilReadable()``) runs on a thread of its own while the test awaits it: a blocked
/// thread of Swift's cooperative pool (two on CI) would stall every other test.
final class PollingTLSClient: @unchecked Sendable {
  // @unchecked Sendable: a test uses its client from one task, one step at a time; a step
  // runs on its dedicated thread while that task awaits it, so no two threads touch the
  // session at once.
  /// The connected, non-blocking socket.
  let descriptor: Int32
  /// The TLS session over it.
  let session: TLSSession

  /// Connects to `127.0.0.1:port` (blocking), then makes the socket non-blocking and starts
  /// TLS for `host`.
  init(port: UInt16, host: String, context: TLSContext) throws {
    let descriptor = socket(AF_INET, socketStreamType, 0)
    self.descriptor = descriptor
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { throw PollingTLSClientError("connect: errno \(errno)") }
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    session = try TLSSession(context: context, descriptor: descriptor, host: host)
  }

  deinit { close() }

  private var closed = false

  /// Closes the session, then the socket.
  func close() {
    guard !closed else { return }
    closed = true
    session.close()
    _ = Glibc.close(descriptor)
  }

  /// Runs the handshake to its end.
  func handshake() async throws {
    try await onDedicatedThread { try self.handshakeWaiting() }
  }

  /// Sends a GET and reads its answer.
  func get(_ path: String) async throws -> (status: Int, body: String) {
    try await onDedicatedThread { try self.getWaiting(path) }
  }

  /// Waits until the socket is readable, at most 5 s; returns whether it became so.
  func waitUntilReadable() async -> Bool {
    await onDedicatedThread {
      var entry = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
      return poll(&entry, 1, 5_000) == 1
    }
  }

  private func handshakeWaiting() throws {
    while true {
      switch session.handshake() {
      case .done: return
      case .wantRead: try wait(read: true)
      case .wantWrite: try wait(read: false)
      case .failed(let failure): throw failure
      }
    }
  }

  private func getWaiting(_ path: String) throws -> (status: Int, body: String) {
    let request = Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
    var sent = 0
    while sent < request.count {
      let result = request.withUnsafeBytes {
        session.write(UnsafeRawBufferPointer(rebasing: $0[sent...]))
      }
      switch result {
      case .wrote(let count): sent += count
      case .wantRead: try wait(read: true)
      case .wantWrite: try wait(read: false)
      case .failed(let failure): throw failure
      }
    }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16 << 10)
    while true {
      if let response = Self.complete(received) { return response }
      let result = buffer.withUnsafeMutableBytes { session.read(into: $0) }
      switch result {
      case .bytes(let count): received += buffer[0..<count]
      case .wantRead: try wait(read: true)
      case .wantWrite: try wait(read: false)
      case .closed: throw PollingTLSClientError("closed after \(received.count) bytes")
      case .failed(let failure): throw failure
      }
    }
  }

  private func wait(read: Bool) throws {
    var entry = pollfd(fd: descriptor, events: Int16(read ? POLLIN : POLLOUT), revents: 0)
    guard poll(&entry, 1, 10_000) == 1 else { throw PollingTLSClientError("no readiness in 10 s") }
  }

  /// The status and body once `bytes` hold a whole answer with a Content-Length.
  private static func complete(_ bytes: [UInt8]) -> (status: Int, body: String)? {
    let separator = Array("\r\n\r\n".utf8)
    guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
      return nil
    }
    let head = String(decoding: bytes[..<end], as: UTF8.self).split(separator: "\r\n")
    let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
    let length =
      head.dropFirst().compactMap { line -> Int? in
        let parts = line.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
        return Int(parts[1].trimmingCharacters(in: .whitespaces))
      }.first ?? 0
    let body = bytes[(end + 4)...]
    guard body.count >= length else { return nil }
    return (status, String(decoding: body.prefix(length), as: UTF8.self))
  }
}

/// The polling client's own failures (not TLS's).
struct PollingTLSClientError: Error, CustomStringConvertible {
  /// What went wrong.
  let description: String
  /// An error saying `description`.
  init(_ description: String) { self.description = description }
}
