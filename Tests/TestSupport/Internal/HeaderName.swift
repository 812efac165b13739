/// Header-name comparison for the test servers and client.
enum HeaderName {
  /// Whether `a` and `b` are the same header name, ignoring ASCII case, by bytes: a lookup
  /// compares the wanted name with every field of a request, and lower-casing both (a string
  /// allocation for a long name such as `X-Goog-Firebase-Installations-Auth`) on each request
  /// would make the servers' cost grow with the client's header count.
  static func same(_ a: String, _ b: String) -> Bool {
    guard a.utf8.count == b.utf8.count else { return false }
    return zip(a.utf8, b.utf8).allSatisfy { x, y in
      x == y || (x | 0x20 == y | 0x20 && (0x61...0x7A).contains(x | 0x20))
    }
  }

  /// The value of `name` among `fields`, repeated fields joined with `, `.
  static func value(of name: String, in fields: [(name: String, value: String)]) -> String? {
    let values = fields.filter { same($0.name, name) }
    return values.isEmpty ? nil : values.map(\.value).joined(separator: ", ")
  }
}
