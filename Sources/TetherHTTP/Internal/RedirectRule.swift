import Foundation

/// What to do with one redirect: the transport's redirect rules as a pure function.
enum RedirectRule {
  enum Decision: Equatable {
    /// Follow it without the named headers.
    case follow(stripping: [String])
    /// Do not follow it; the request fails with this error.
    case refuse(HTTPError)
  }

  /// At most `maximumRedirects`; never from `https` to anything else; only to http(s) URLs
  /// whose host passes ``RequestValidation/validateHost(of:)``; the
  /// credentials (`Authorization`, `Cookie`, `Proxy-Authorization` and `sensitiveHeaders`,
  /// lower-cased) are stripped when the target's origin differs from the original request's.
  static func decide(
    original: URL, previous: URL, target: URL?, redirects: Int, maximumRedirects: Int,
    headerNames: [String], sensitiveHeaders: Set<String>
  ) -> Decision {
    let from = HTTPError.redacted(original)
    guard let target else {
      return .refuse(.redirectRefused(url: from, reason: "the redirect has no target"))
    }
    if redirects > maximumRedirects {
      return .refuse(.redirectRefused(url: from, reason: "more than \(maximumRedirects) redirects"))
    }
    let scheme = target.scheme?.lowercased() ?? ""
    if previous.scheme?.lowercased() == "https" || original.scheme?.lowercased() == "https",
      scheme != "https"
    {
      return .refuse(
        .redirectRefused(
          url: from,
          reason: "a redirect from https to \(scheme.isEmpty ? "?" : scheme) is never followed"
        ))
    }
    guard scheme == "http" || scheme == "https" else {
      return .refuse(.redirectRefused(url: from, reason: "the redirect is not to http(s)"))
    }
    do throws(HTTPError) {
      try RequestValidation.validateHost(of: target)
    } catch {
      return .refuse(
        .redirectRefused(
          url: from,
          reason: "the redirect's host is missing or holds a control character, a space or a "
            + "delimiter"))
    }
    guard Origin(original) != Origin(target) else { return .follow(stripping: []) }
    let credentials = HTTPRequest.credentialHeaders.union(sensitiveHeaders)
    return .follow(stripping: headerNames.filter { credentials.contains($0.lowercased()) }.sorted())
  }
}

/// An origin in the sense of RFC 6454: scheme, host and port (the scheme's default filled in).
struct Origin: Equatable {
  let scheme: String
  let host: String
  let port: Int?

  init(_ url: URL) {
    scheme = url.scheme?.lowercased() ?? ""
    host = url.host?.lowercased() ?? ""
    port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
  }
}
