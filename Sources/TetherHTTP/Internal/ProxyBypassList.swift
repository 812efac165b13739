#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which hosts a proxy setting reaches directly: ``HTTPProxy/bypass`` read by curl's documented
/// `NO_PROXY` rules (`CURLOPT_NOPROXY`, curl 7.86 and later), so that one `no_proxy` means the
/// same to curl and to Tether.
///
/// - Entries are trimmed of spaces and tabs, and compared without regard to case.
/// - A lone `*` matches every host. It is the only wildcard: `*.example.test` is a name no
///   host has, so it matches nothing (write `example.test` or `.example.test`).
/// - A name matches that host and every host in its domain: `example.test` (or
///   `.example.test`, the leading dot is ignored) matches `example.test` and
///   `api.example.test`, never `notexample.test`; `test` matches `example.test`. A trailing dot
///   is ignored, in the entry and in the host (`example.test.` is `example.test`).
/// - An IP address (IPv6 with or without brackets) matches that address only, and an address
///   with a prefix length (`10.0.0.0/8`, `fd00::/8`) every address in that range. A host
///   that is an IP address is matched by these entries only, never by a name's suffix.
/// - A `:port` after a name or a bracketed address is ignored (`db:5432` is `db`).
struct ProxyBypassList {
  let entries: [String]

  init(_ entries: [String]) {
    self.entries = entries
  }

  /// Whether requests to `host` (as a URL spells it: an IPv6 literal may be in brackets) go
  /// directly.
  func contains(host: String) -> Bool {
    var host = Self.bare(host.lowercased())
    if host.hasSuffix(".") { host.removeLast() }
    guard !host.isEmpty else { return false }
    let address = IPAddress(host)
    for entry in entries {
      var pattern = entry.trimmingSpaces().lowercased()
      if pattern == "*" { return true }
      if let slash = pattern.firstIndex(of: "/") {
        if let address, let range = IPAddress(Self.bare(String(pattern[..<slash]))),
          let bits = Int(pattern[pattern.index(after: slash)...]),
          address.isIn(range, prefixLength: bits)
        {
          return true
        }
        continue
      }
      pattern = Self.bare(Self.withoutPort(pattern))
      if let exact = IPAddress(pattern) {
        if exact == address { return true }
        continue
      }
      guard address == nil else { continue }
      if pattern.hasSuffix(".") { pattern.removeLast() }
      if pattern.hasPrefix(".") { pattern.removeFirst() }
      guard !pattern.isEmpty else { continue }
      if host == pattern || host.hasSuffix("." + pattern) { return true }
    }
    return false
  }

  private static func bare(_ host: String) -> String {
    host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
  }

  /// `host:port` → `host`; an IPv6 literal (several colons, no brackets) is kept.
  private static func withoutPort(_ entry: String) -> String {
    if entry.hasPrefix("["), let end = entry.firstIndex(of: "]") {
      return String(entry[...end])
    }
    let colons = entry.utf8.count { $0 == UInt8(ascii: ":") }
    guard colons == 1, let colon = entry.firstIndex(of: ":") else { return entry }
    return String(entry[..<colon])
  }
}

/// An IPv4 or IPv6 address as its bytes in network order (4 or 16).
private struct IPAddress: Equatable {
  let bytes: [UInt8]

  init?(_ text: String) {
    var v4 = in_addr()
    if inet_pton(AF_INET, text, &v4) == 1 {
      bytes = withUnsafeBytes(of: &v4) { Array($0) }
      return
    }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, text, &v6) == 1 {
      bytes = withUnsafeBytes(of: &v6) { Array($0) }
      return
    }
    return nil
  }

  /// Whether the first `prefixLength` bits equal `network`'s (same family only).
  func isIn(_ network: IPAddress, prefixLength: Int) -> Bool {
    guard bytes.count == network.bytes.count, (0...bytes.count * 8).contains(prefixLength)
    else { return false }
    for index in bytes.indices {
      let bits = min(8, max(0, prefixLength - index * 8))
      guard bits > 0 else { return true }
      let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
      if bytes[index] & mask != network.bytes[index] & mask { return false }
    }
    return true
  }
}

extension String {
  /// The string without leading and trailing spaces and tabs.
  fileprivate func trimmingSpaces() -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    guard let first = firstIndex(where: { !isSpace($0) }),
      let last = lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(self[first...last])
  }
}
