import Foundation
import Testing

@testable import TetherHTTP

/// A TLS refusal (a certificate refused either way, a client configuration OpenSSL refused) is
/// typed where TLS knows it, from OpenSSL's verification result and the alert's number, and
/// carried in the error's reason: whether a failure is retried never depends on its words.
@Suite("TLS refusals are typed")
struct TLSRefusalTests {
  // Guards: the retry policy, the pool and etcd's fail-over told a refusal by searching the
  // reason for "certificate " or "alert bad certificate": words OpenSSL may change, and that
  // any other failure may hold.
  @Test func whetherAFailureIsRetriedDependsOnItsTypeNotItsWords() {
    // The words of refusals, without a refusal behind them: retried like any network failure.
    for words in [
      "certificate expired", "TLS configuration refused: no PEM certificate found",
      "TLS handshake failed: sslv3 alert bad certificate",
    ] {
      let error = HTTPError.unreachable(url: "https://a", reason: words)
      #expect(error.tlsRefusal == nil)
      #expect(HTTPRetryPolicy.isTransient(error), "\(words)")
    }
    // A refusal is never retried, whatever its words say.
    let refused = HTTPError.unreachable(
      url: "https://a", reason: FailureReason("connection reset", tlsRefusal: .certificateExpired))
    #expect(refused.tlsRefusal == .certificateExpired)
    #expect(!HTTPRetryPolicy.isTransient(refused))
    // Each failure the TLS layer makes: a refusal by its case, with words that say what.
    let failures: [(TLSFailure, TLSRefusal?, String)] = [
      (.certificateExpired, .certificateExpired, "certificate expired"),
      (.certificateNotYetValid, .certificateNotYetValid, "certificate not yet valid"),
      (
        .certificateUntrusted("self-signed certificate"), .certificateUntrusted,
        "certificate not trusted (self-signed or unknown issuer)"
      ),
      (.certificateHostMismatch, .certificateHostMismatch, "certificate is for another host"),
      (
        .certificateRejected("certificate revoked", code: 23),
        .certificateRejected(verifyResult: 23), "certificate rejected: certificate revoked"
      ),
      (
        .clientCertificateRefused(alert: 42, detail: "sslv3 alert bad certificate"),
        .clientCertificateRefused(alert: 42),
        "the server refused the TLS client certificate (sslv3 alert bad certificate)"
      ),
      (
        .clientCertificateRefused(alert: 116, detail: "tlsv13 alert certificate required"),
        .clientCertificateRefused(alert: 116),
        "the server requires a TLS client certificate (tlsv13 alert certificate required)"
      ),
      (
        .invalidConfiguration("no PEM certificate found"), .invalidConfiguration,
        "TLS configuration refused: no PEM certificate found"
      ),
      (.handshakeFailed("connection reset"), nil, "TLS handshake failed: connection reset"),
      (.connectionFailed("unexpected eof"), nil, "TLS connection failed: unexpected eof"),
      (.libraryUnavailable("no libssl"), nil, "TLS could not be loaded (no libssl)"),
    ]
    for (failure, refusal, words) in failures {
      let error = failure.httpError(url: "https://a")
      #expect(
        error == .unreachable(url: "https://a", reason: FailureReason(words, tlsRefusal: refusal)))
      #expect(error.tlsRefusal == refusal)
      #expect(HTTPRetryPolicy.isTransient(error) == (refusal == nil), "\(failure)")
      #expect(error.description == "https://a: could not reach the server (\(words))")
    }
  }

  /// OpenSSL packs an error's library and reason differently in 1.1 and 3; the alert a
  /// server sent is read from the numbers, whatever the words.
  @Test func aReceivedAlertIsReadFromOpenSSLsErrorCode() {
    let three: UInt = 0x3000_0000
    let oneOne: UInt = 0x1010_1000
    // libssl (20), SSL_R_SSLV3_ALERT_BAD_CERTIFICATE (1042), in 3 and in 1.1 (function 148).
    #expect(OpenSSLError(code: 20 << 23 | 1042, version: three, words: "x").receivedAlert == 42)
    #expect(
      OpenSSLError(code: 20 << 24 | 148 << 12 | 1042, version: oneOne, words: "x").receivedAlert
        == 42)
    // SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED (1116).
    #expect(OpenSSLError(code: 20 << 23 | 1116, version: three, words: "").receivedAlert == 116)
    // The same reason number from libcrypto (6), a system error, a reason that is no alert.
    #expect(OpenSSLError(code: 6 << 23 | 1042, version: three, words: "").receivedAlert == nil)
    #expect(OpenSSLError(code: 1 << 31 | 104, version: three, words: "").receivedAlert == nil)
    #expect(OpenSSLError(code: 20 << 23 | 134, version: three, words: "").receivedAlert == nil)
  }

  /// A certificate the trust store holds already is told by its code too, not its words.
  @Test func aCertificateAlreadyInTheStoreIsReadFromItsCode() {
    // ERR_LIB_X509 (11), X509_R_CERT_ALREADY_IN_HASH_TABLE (101), in 3 and in 1.1.
    #expect(
      OpenSSLError(code: 11 << 23 | 101, version: 0x3000_0000, words: "")
        .isCertificateAlreadyInStore)
    #expect(
      OpenSSLError(code: 11 << 24 | 124 << 12 | 101, version: 0x1010_1000, words: "")
        .isCertificateAlreadyInStore)
    #expect(
      !OpenSSLError(code: 20 << 23 | 101, version: 0x3000_0000, words: "cert already in hash table")
        .isCertificateAlreadyInStore)
  }

  @Test func anAlertRefusingTheClientCertificateIsARefusalWhateverItsWords() {
    for alert in [42, 43, 44, 45, 46, 48, 49, 116] {
      let error = OpenSSLError(
        code: 20 << 23 | UInt(1000 + alert), version: 0x3000_0000, words: "words OpenSSL chose")
      let failure = TLSSession.alertFailure(error)
      #expect(failure == .clientCertificateRefused(alert: alert, detail: "words OpenSSL chose"))
      #expect(failure?.refusal == .clientCertificateRefused(alert: alert))
    }
    // handshake_failure (40), protocol_version (70): no common ground, not a refusal of the
    // client's certificate; no_application_protocol (120) says the server wants HTTP/2.
    for alert in [40, 70] {
      let error = OpenSSLError(
        code: 20 << 23 | UInt(1000 + alert), version: 0x3000_0000, words: "alert bad certificate")
      #expect(TLSSession.alertFailure(error) == nil)
    }
    let alpn = TLSSession.alertFailure(
      OpenSSLError(code: 20 << 23 | 1120, version: 0x3000_0000, words: "no application protocol"))
    #expect(alpn?.reason.contains("speaks only HTTP/2") == true)
    #expect(alpn?.refusal == nil)
  }

  @Test func aReasonReadsAsItsWords() {
    let reason = FailureReason("certificate expired", tlsRefusal: .certificateExpired)
    #expect("\(reason)" == "certificate expired")
    let literal: FailureReason = "connection refused"
    #expect(literal == FailureReason("connection refused"))
    #expect(literal.tlsRefusal == nil)
    let host = "a.test"
    let interpolated: FailureReason = "\(host) not found"
    #expect(interpolated.description == "a.test not found")
  }

  // Guards: the reason was a String before refusals were typed; code written then (binding it,
  // comparing an error to one built from words, searching its words) compiles and answers as
  // before.
  @Test func aReasonReadsAsTheStringItWas() {
    let thrown = HTTPError.unreachable(
      url: "https://a",
      reason: FailureReason("certificate expired", tlsRefusal: .certificateExpired))
    #expect(thrown == .unreachable(url: "https://a", reason: "certificate expired"))
    #expect(thrown != .unreachable(url: "https://a", reason: "connection refused"))
    guard case .unreachable(_, let reason) = thrown else {
      Issue.record("expected unreachable")
      return
    }
    #expect(reason.contains("expired") && reason.hasPrefix("certificate") && reason.hasSuffix("d"))
    #expect(!reason.isEmpty && reason.count == 19)
    let words: String = "\(reason)"
    #expect(words == "certificate expired" && reason.description == words)
    #expect(Set([reason, "certificate expired"]).count == 1)
  }
}
