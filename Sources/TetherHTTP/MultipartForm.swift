import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields and files, as an HTML form with a file
/// input sends them. Send it with an ``Endpoint/multipart(_:method:headers:acceptableStatuses:decoder:)``
/// endpoint.
///
/// ```swift
/// var form = MultipartForm()
/// form.append("A day at the beach", name: "caption")
/// form.append(contentsOf: URL(fileURLWithPath: "/tmp/beach.jpg"), name: "photo",
///             contentType: "image/jpeg")
/// let receipt = try await api.send(Uploads.photo, body: form)
/// ```
///
/// - Each part has a `Content-Disposition: form-data` header with its `name` (and `filename`
///   for a file); a `"`, CR or LF in a name or file name is percent-encoded (`%22`, `%0D`,
///   `%0A`), as browsers do. A file part says its `Content-Type`
///   (`application/octet-stream` unless given); a text field says none, so it is UTF-8 text.
/// - The boundary is random (a fixed prefix and 32 hex digits), so it cannot occur in a part's
///   content by chance.
/// - Files are read when the request is made (``encoded()``), not when they are appended.
///   The engine sends a request from one buffer, so the whole body is held in memory while it
///   is sent, each file read from a memory-mapped copy: keep an upload within the memory the
///   process can spare (tens of megabytes are fine). Tether does not stream request bodies
///   from disk yet.
public struct MultipartForm: Sendable, Hashable {
  /// One field of the form.
  public struct Part: Sendable, Hashable {
    /// Where a part's bytes come from.
    public enum Content: Sendable, Hashable {
      /// Bytes given in memory.
      case data(Data)
      /// The contents of a file, read when the request is made.
      case file(URL)
    }

    /// The field's name.
    public var name: String
    /// The file name sent with the part, for a file; `nil` for a plain field.
    public var filename: String?
    /// The part's `Content-Type`; `nil` sends none (a text field).
    public var contentType: String?
    /// The part's bytes.
    public var content: Content

    /// Creates a part.
    public init(name: String, filename: String? = nil, contentType: String? = nil, content: Content)
    {
      self.name = name
      self.filename = filename
      self.contentType = contentType
      self.content = content
    }
  }

  /// The string that separates the parts; it must not occur in any part's content.
  public var boundary: String
  /// The parts, sent in order.
  public var parts: [Part]

  /// Creates a form with a random boundary (or `boundary`) and `parts`.
  public init(boundary: String? = nil, parts: [Part] = []) {
    self.boundary = boundary ?? Self.randomBoundary()
    self.parts = parts
  }

  /// The request's `Content-Type`: `multipart/form-data; boundary=…`.
  public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

  /// Adds a text field.
  public mutating func append(_ value: String, name: String) {
    parts.append(Part(name: name, content: .data(Data(value.utf8))))
  }

  /// Adds a file given as bytes in memory.
  ///
  /// - Parameters:
  ///   - data: The file's bytes.
  ///   - name: The field's name.
  ///   - filename: The file name the server sees.
  ///   - contentType: The file's type; `application/octet-stream` by default.
  public mutating func append(
    _ data: Data, name: String, filename: String,
    contentType: String = "application/octet-stream"
  ) {
    parts.append(
      Part(name: name, filename: filename, contentType: contentType, content: .data(data)))
  }

  /// Adds the file at `file`, read when the request is made.
  ///
  /// - Parameters:
  ///   - file: A file URL.
  ///   - name: The field's name.
  ///   - filename: The file name the server sees; the file's own name by default.
  ///   - contentType: The file's type; `application/octet-stream` by default.
  public mutating func append(
    contentsOf file: URL, name: String, filename: String? = nil,
    contentType: String = "application/octet-stream"
  ) {
    parts.append(
      Part(
        name: name, filename: filename ?? file.lastPathComponent, contentType: contentType,
        content: .file(file)))
  }

  /// The body's bytes: each part after a `--boundary` line, with its headers, then the closing
  /// `--boundary--` line.
  ///
  /// - Throws: The error of a file part that cannot be read.
  public func encoded() throws -> Data {
    var body = Data()
    for part in parts {
      body.append(Data(head(of: part).utf8))
      switch part.content {
      case .data(let data): body.append(data)
      case .file(let file): body.append(try Data(contentsOf: file, options: .alwaysMapped))
      }
      body.append(Data("\r\n".utf8))
    }
    body.append(Data("--\(boundary)--\r\n".utf8))
    return body
  }

  /// The delimiter line and headers that open `part`, up to and including the empty line.
  func head(of part: Part) -> String {
    var head =
      "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escaped(part.name))\""
    if let filename = part.filename { head += "; filename=\"\(Self.escaped(filename))\"" }
    head += "\r\n"
    if let contentType = part.contentType {
      head += "Content-Type: \(Self.singleLine(contentType))\r\n"
    }
    return head + "\r\n"
  }

  /// `text` fit for a quoted parameter: `"`, CR and LF percent-encoded, as the HTML standard's
  /// form encoding (and RFC 7578 section 4.2's note) do.
  static func escaped(_ text: String) -> String {
    var escaped = ""
    for character in text.unicodeScalars {
      switch character {
      case "\"": escaped += "%22"
      case "\r": escaped += "%0D"
      case "\n": escaped += "%0A"
      default: escaped.unicodeScalars.append(character)
      }
    }
    return escaped
  }

  /// A header value with any line break removed, so it cannot start another header.
  static func singleLine(_ text: String) -> String {
    String(text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" })
  }

  /// A boundary no content holds by chance: a recognizable prefix and 128 random bits.
  static func randomBoundary() -> String {
    var generator = SystemRandomNumberGenerator()
    let digits = (0..<2).map { _ in
      let hex = String(generator.next() as UInt64, radix: 16)
      return String(repeating: "0", count: 16 - hex.count) + hex
    }
    return "tether-boundary-" + digits.joined()
  }
}
