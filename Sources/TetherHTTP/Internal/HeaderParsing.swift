import Foundation

/// Parsers for the header values Tether acts on. Every number read from the network is
/// range-checked here: no value can trap, overflow a `Duration`, or stop polling for years.
enum HeaderParsing {
  /// The longest wait any header can ask for, in seconds (one day). Callers clamp further to
  /// their own maximum back-off.
  static let maximumDelay: Double = 86_400

  /// Whether two header names are the same, ignoring ASCII case (names are ASCII tokens; any
  /// other byte must match exactly). Byte work only: Foundation's `caseInsensitiveCompare`
  /// costs microseconds per call, and building a request compares every name it sets.
  static func sameName(_ a: String, _ b: String) -> Bool {
    guard a.utf8.count == b.utf8.count else { return false }
    return zip(a.utf8, b.utf8).allSatisfy { x, y in
      x == y || (x | 0x20 == y | 0x20 && (0x61...0x7A).contains(x | 0x20))
    }
  }

  /// Whether `byte` may appear in a token (RFC 9110 tchar): a method or a header name.
  static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
    case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E:
      return true
    default: return false
    }
  }

  /// `Retry-After` as seconds from `now`: delay-seconds or an HTTP date, clamped to
  /// `0...maximumDelay`; `nil` when the value is neither.
  static func retryAfter(_ text: String, now: Date = Date()) -> Double? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    guard !trimmed.isEmpty, trimmed.utf8.count <= 64 else { return nil }
    if trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
      // Any run of digits; one too long for Int is simply "very long".
      guard let seconds = Int(trimmed) else { return maximumDelay }
      return Double(min(seconds, Int(maximumDelay)))
    }
    guard let date = httpDate(trimmed) else { return nil }
    let seconds = date.timeIntervalSince(now)
    guard seconds.isFinite else { return nil }
    return min(max(0, seconds), maximumDelay)
  }

  /// `max-age` (or `s-maxage` when `shared`) from a `Cache-Control` value, in seconds,
  /// clamped to `0...Int32.max`; `nil` when absent or malformed.
  static func maxAge(cacheControl text: String, shared: Bool = false) -> Int? {
    var result: Int?
    for directive in text.split(separator: ",") {
      let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
      guard name == "max-age" || (shared && name == "s-maxage"), parts.count == 2 else { continue }
      var value = parts[1].trimmingCharacters(in: .whitespaces)
      if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
        value = String(value.dropFirst().dropLast())
      }
      guard !value.isEmpty, value.utf8.count <= 32,
        value.utf8.allSatisfy({ (0x30...0x39).contains($0) })
      else { return nil }
      let seconds = Int(value).map { min($0, Int(Int32.max)) } ?? Int(Int32.max)
      if name == "s-maxage" || result == nil { result = seconds }
    }
    return result
  }

  /// Whether `text` is a well-formed entity tag (`"…"` or `W/"…"`, at most 1 KiB): only such
  /// a tag is echoed in `If-None-Match` and `If-Match`.
  static func entityTag(_ text: String) -> String? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    guard trimmed.utf8.count <= 1024 else { return nil }
    let opaque = trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : Substring(trimmed)
    guard opaque.count >= 2, opaque.hasPrefix("\""), opaque.hasSuffix("\"") else { return nil }
    let inner = opaque.utf8.dropFirst().dropLast()
    // RFC 9110 etagc: %x21 / %x23-7E / obs-text
    guard inner.allSatisfy({ $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }) else {
      return nil
    }
    return trimmed
  }

  /// A `Last-Modified` value worth echoing in `If-Modified-Since`: a valid HTTP date (at most
  /// 64 bytes), returned as sent.
  static func lastModified(_ text: String) -> String? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    guard trimmed.utf8.count <= 64, httpDate(trimmed) != nil else { return nil }
    return trimmed
  }

  /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), parsed without a formatter: strict and
  /// allocation-free enough to run on every response.
  static func httpDate(_ text: String) -> Date? {
    let bytes = Array(text.utf8)
    guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20,
      bytes[11] == 0x20, bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"),
      bytes[22] == UInt8(ascii: ":"), bytes[25] == 0x20,
      String(decoding: bytes[26...], as: UTF8.self) == "GMT"
    else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for byte in bytes[range] {
        guard (0x30...0x39).contains(byte) else { return nil }
        value = value * 10 + Int(byte - 0x30)
      }
      return value
    }
    let months = [
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    guard let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19),
      let minute = number(20..<22), let second = number(23..<25),
      let month = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
      (1...31).contains(day), hour < 24, minute < 60, second < 61
    else { return nil }
    // Days from the civil date (Howard Hinnant's algorithm), exact for the Gregorian calendar.
    let y = month < 2 ? year - 1 : year
    let era = y / 400
    let yearOfEra = y - era * 400
    let m = month + 1
    let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second
    return Date(timeIntervalSince1970: Double(seconds))
  }
}
