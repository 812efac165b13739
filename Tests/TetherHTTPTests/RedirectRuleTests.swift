import Foundation
import Testing

@testable import TetherHTTP

/// The redirect rules on their own, for the cases the loopback server cannot produce: it has
/// no TLS, so `https` origins are checked here (the plain-HTTP cases run for real in
/// `HTTPTransportTests`).
@Suite struct RedirectRuleTests {
  static func decide(
    _ original: String, to target: String, previous: String? = nil, redirects: Int = 1,
    headers: [String] = ["Authorization", "Cookie", "Proxy-Authorization", "X-Key", "Accept"]
  ) -> RedirectRule.Decision {
    RedirectRule.decide(
      original: URL(string: original)!, previous: URL(string: previous ?? original)!,
      target: URL(string: target), redirects: redirects, maximumRedirects: 5,
      headerNames: headers, sensitiveHeaders: ["x-key"])
  }

  @Test(arguments: [
    "http://api.example.com/a", "http://example.com:443/a", "ftp://example.com/a",
  ])
  func httpsNeverRedirectsToAnythingButHTTPS(_ target: String) {
    guard
      case .refuse(.redirectRefused(_, let reason)) = Self.decide(
        "https://example.com/a", to: target)
    else {
      Issue.record("followed a redirect from https to \(target)")
      return
    }
    #expect(reason.contains("https") || reason.contains("http(s)"))
  }

  @Test func onceHTTPSAlwaysHTTPSAlongTheChain() {
    let decision = Self.decide(
      "https://example.com/a", to: "http://example.com/c", previous: "https://cdn.example.com/b")
    guard case .refuse = decision else {
      Issue.record("followed \(decision)")
      return
    }
  }

  @Test(arguments: [
    "https://other.example.com/a",  // another host
    "https://example.com:8443/a",  // another port
  ])
  func credentialsAreStrippedForAnotherOrigin(_ target: String) {
    #expect(
      Self.decide("https://example.com/a", to: target)
        == .follow(stripping: ["Authorization", "Cookie", "Proxy-Authorization", "X-Key"]))
  }

  @Test func theSameOriginKeepsEverythingAndDefaultPortsMatch() {
    #expect(
      Self.decide("https://example.com/a", to: "https://EXAMPLE.com:443/b")
        == .follow(stripping: []))
    #expect(
      Self.decide("http://example.com/a", to: "http://example.com:80/b") == .follow(stripping: []))
  }

  @Test func httpToHTTPSIsAnotherOriginButAllowed() {
    #expect(
      Self.decide("http://example.com/a", to: "https://example.com/a")
        == .follow(stripping: ["Authorization", "Cookie", "Proxy-Authorization", "X-Key"]))
  }

  @Test func aHandfulAtMost() {
    guard case .refuse = Self.decide("http://a.test/", to: "http://a.test/", redirects: 6) else {
      Issue.record("followed a sixth redirect")
      return
    }
  }
}
