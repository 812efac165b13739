import Foundation
import Testing

@testable import TetherHTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The plain byte stream over a real, non-blocking socket pair: what each result means to the
/// connection that reads and writes through it.
@Suite struct PlainByteStreamTests {
  /// Two connected, non-blocking stream sockets: the stream's, and the peer's.
  func pair() -> (stream: PlainByteStream, peer: Int32) {
    var ends: [Int32] = [0, 0]
    #expect(socketpair(AF_UNIX, socketStreamType, 0, &ends) == 0)
    for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
    return (PlainByteStream(descriptor: ends[0]), ends[1])
  }

  func read(_ stream: PlainByteStream) -> (ByteStreamRead, [UInt8]) {
    var storage = [UInt8](repeating: 0, count: 64)
    return storage.withUnsafeMutableBytes { buffer in
      let result = stream.read(into: buffer)
      guard case .bytes(let count) = result else { return (result, []) }
      return (result, Array(buffer[0..<count]))
    }
  }

  @Test func readsWhatArrivedThenWantsReadThenSeesTheEnd() {
    let (stream, peer) = pair()
    defer { stream.close() }
    #expect(read(stream).0 == .wantRead)
    #expect(!stream.hasUnreadInput())
    _ = Array("hello".utf8).withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) }
    #expect(stream.hasUnreadInput())
    let (result, bytes) = read(stream)
    #expect(result == .bytes(5) && bytes == Array("hello".utf8))
    _ = close(peer)
    // The end of the stream is input too: an idle connection that sees it is not reused.
    #expect(stream.hasUnreadInput())
    #expect(read(stream).0 == .closed)
  }

  @Test func writesUntilTheSocketIsFullThenWantsWrite() {
    let (stream, peer) = pair()
    defer {
      stream.close()
      _ = close(peer)
    }
    let chunk = [UInt8](repeating: 7, count: 64 << 10)
    var total = 0
    var last = ByteStreamWrite.wrote(0)
    for _ in 0..<1000 {
      last = chunk.withUnsafeBytes { stream.write($0) }
      guard case .wrote(let count) = last else { break }
      total += count
    }
    #expect(last == .wantWrite)
    #expect(total > 0)
  }

  @Test func writingToAClosedPeerFailsWithoutSignal() {
    // Without MSG_NOSIGNAL this write would end the test process with SIGPIPE.
    let (stream, peer) = pair()
    defer { stream.close() }
    _ = close(peer)
    let result = Array("GET / HTTP/1.1\r\n\r\n".utf8).withUnsafeBytes { stream.write($0) }
    guard case .failed = result else {
      Issue.record("expected a failed write, got \(result)")
      return
    }
  }

  @Test func readinessMeansWhatItSays() {
    let (stream, peer) = pair()
    defer {
      stream.close()
      _ = close(peer)
    }
    #expect(stream.interest(reading: true, writing: false) == (read: true, write: false))
    #expect(stream.interest(reading: false, writing: true) == (read: false, write: true))
    #expect(stream.progress(readable: false, writable: true) == (read: false, write: true))
    #expect(stream.bufferedByteCount == 0)
  }

  @Test func closingTwiceClosesTheDescriptorOnce() {
    let (stream, peer) = pair()
    defer { _ = close(peer) }
    stream.close()
    // Another descriptor may take the number now; a second close must not close it.
    let reused = dup(peer)
    defer { _ = close(reused) }
    stream.close()
    #expect(fcntl(reused, F_GETFD) >= 0)
  }
}
