import Tether
import TetherSupport

/// What an `.http` key knows about its resource beyond what the reference's version engine
/// decides: the validators of the last representation it read or wrote (for conditional
/// reads), and which of its reads may be older than one of its own writes.
///
/// An HTTP server orders a resource's reads and writes, but its validators are not ordered:
/// an `ETag` does not say which of two representations is newer. A read's answer is known to
/// be at least as new as a write of this key's only when the read was sent after that write
/// was answered. A read that overlapped a write (sent while it was in flight, or before it
/// started and answered after) may carry the representation from before it; such an answer
/// is `superseded` and never reaches the holders (the next read, sent after the write, does).
final class Validators: Sendable {
  private struct State {
    var etag: String?
    var lastModified: String?
    /// Whether the holders' value last came without a version: a representation without
    /// validators, or a server-sent event's data.
    var versionless = false
    /// This key's writes begun and ended: a read is ordered after every write begun before it
    /// when none was in flight when it was sent and none began since.
    var writesBegun = 0
    var writesEnded = 0
  }
  private let state = Lock(State())

  /// When a read was sent, as far as this key's own writes are concerned.
  struct ReadTicket: Sendable {
    fileprivate let writesBegun: Int
    fileprivate let writeInFlight: Bool
  }

  var current: (etag: String?, lastModified: String?) {
    state.withLock { ($0.etag, $0.lastModified) }
  }

  /// Whether the holders' value last came without a version (a representation without
  /// validators, or a server-sent event's data): a save derived from no version is then
  /// derived from the current validators. Otherwise no version means nothing was seen when
  /// the value was made, and the save is derived from "absent".
  var lastDeliveredWithoutVersion: Bool { state.withLock { $0.versionless } }

  /// Notes that the holders were given a value without a version (a server-sent event's data).
  func deliveredWithoutVersion() { state.withLock { $0.versionless = true } }

  /// Notes that a read is being sent.
  func beginRead() -> ReadTicket {
    state.withLock {
      ReadTicket(writesBegun: $0.writesBegun, writeInFlight: $0.writesBegun != $0.writesEnded)
    }
  }

  /// Notes that one of this key's writes is being sent; `endWrite()` follows its answer.
  func beginWrite() { state.withLock { $0.writesBegun += 1 } }

  /// Notes that a write begun with `beginWrite()` was answered (or failed).
  func endWrite() { state.withLock { $0.writesEnded += 1 } }

  /// Records a representation read from the server; returns its version. With a `ticket`,
  /// an answer that may be older than one of this key's own writes is not recorded, and the
  /// result is `nil` (see the type's discussion).
  func record(
    _ response: HTTPResponseMessage, readWith ticket: ReadTicket? = nil
  ) -> SharedVersion?? {
    let version = SharedVersion(validatorsOf: response)
    return state.withLock { state -> SharedVersion?? in
      if let ticket, ticket.writeInFlight || ticket.writesBegun != state.writesBegun {
        return nil
      }
      (state.etag, state.lastModified) = (response.etag, response.lastModified)
      state.versionless = version == nil
      return .some(version)
    }
  }

  /// Records that a read found no resource (404), unless (with a `ticket`) the answer may be
  /// older than one of this key's own writes.
  func recordAbsent(readWith ticket: ReadTicket? = nil) {
    state.withLock { state in
      if let ticket, ticket.writeInFlight || ticket.writesBegun != state.writesBegun { return }
      (state.etag, state.lastModified) = (nil, nil)
      state.versionless = false
    }
  }

  /// Records a representation this key's own save stored; returns its version.
  @discardableResult
  func recordOwnWrite(_ response: HTTPResponseMessage) -> SharedVersion? {
    let version = SharedVersion(validatorsOf: response)
    state.withLock { state in
      (state.etag, state.lastModified) = (response.etag, response.lastModified)
      state.versionless = version == nil
    }
    return version
  }

  /// Forgets the validators: the next read is unconditional.
  func forget() {
    state.withLock { state in (state.etag, state.lastModified) = (nil, nil) }
  }
}

extension SharedVersion {
  /// The version named by a response's validators (`nil` when it has neither).
  init?(validatorsOf response: HTTPResponseMessage) {
    self.init(etag: response.etag, lastModified: response.lastModified)
  }

  init?(etag: String?, lastModified: String?) {
    guard etag != nil || lastModified != nil else { return nil }
    // Neither header value holds a line break.
    self.init("\(etag ?? "")\n\(lastModified ?? "")")
  }

  /// The validators this version was made from.
  var validators: (etag: String?, lastModified: String?) {
    let parts = rawValue.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    let etag = parts.first.map(String.init).flatMap { $0.isEmpty ? nil : $0 }
    let lastModified = parts.count > 1 ? String(parts[1]) : ""
    return (etag, lastModified.isEmpty ? nil : lastModified)
  }
}
