import Foundation

/// A resource that `GET` reads and `PUT`/`PATCH` replace, with conditional requests as a
/// careful server implements them: `If-None-Match` on reads (304), `If-Match` on writes (412
/// when the tag is not the current one).
///
/// ```swift
/// let resource = WritableResource(#"{"count":0}"#)
/// server.serve(resource, at: "/counter")
/// // GET → 200 with ETag; PUT with If-Match: <that tag> → 200 with the new ETag
/// // PUT with a stale If-Match → 412
/// resource.replace(with: #"{"count":5}"#)   // another writer
/// resource.remove()   // GET → 404; PUT with If-None-Match: * creates it again
/// ```
///
/// A `PUT` with `If-None-Match: *` writes only while the resource is absent (412 otherwise).
///
/// All methods are thread-safe.
public final class WritableResource: Sendable {
  /// Which validator the resource offers with each version.
  public enum Validators: Sendable {
    /// A strong `ETag` (and `If-Match` on writes), the default.
    case strongETag
    /// A weak `ETag` (`W/"…"`), which `If-Match` can never match, and `Last-Modified`.
    case weakETagAndLastModified
    /// Only `Last-Modified` (and `If-Unmodified-Since` on writes).
    case lastModifiedOnly
    /// None at all.
    case none
  }

  private let state: LockedState<HTTPDocument>
  private let writes = LockedState(0)
  private let modified = LockedState(1)
  private let present = LockedState(true)
  private let validators: Validators
  private let onWrite: @Sendable (Data) -> Data

  /// Creates the resource with `body` as its first version.
  ///
  /// - Parameters:
  ///   - validators: What the resource offers for conditional requests.
  ///   - onWrite: What the server stores for a written body (the default stores it as sent;
  ///     a server that computes fields, such as a version, changes it here). The answer to a
  ///     write carries what was stored.
  public init(
    _ body: String, contentType: String = "application/json",
    validators: Validators = .strongETag, onWrite: @escaping @Sendable (Data) -> Data = { $0 }
  ) {
    state = LockedState(HTTPDocument(body: Data(body.utf8), contentType: contentType))
    self.validators = validators
    self.onWrite = onWrite
  }

  /// The `Last-Modified` date of the current version: a second later at each write.
  private var lastModified: String {
    let seconds = modified.withLock { $0 }
    return HTTPDate.string(from: Date(timeIntervalSince1970: 1_700_000_000 + Double(seconds)))
  }

  private func headers(for document: HTTPDocument) -> [String: String] {
    var headers = ["Content-Type": document.contentType]
    switch validators {
    case .strongETag: headers["ETag"] = document.etag
    case .weakETagAndLastModified:
      headers["ETag"] = "W/" + document.etag
      headers["Last-Modified"] = lastModified
    case .lastModifiedOnly: headers["Last-Modified"] = lastModified
    case .none: break
    }
    return headers
  }

  /// The current version.
  public var document: HTTPDocument { state.withLock { $0 } }

  /// How many writes the server accepted.
  public var acceptedWrites: Int { writes.withLock { $0 } }

  /// Whether the resource exists (a `GET` of an absent one answers 404).
  public var exists: Bool { present.withLock { $0 } }

  /// Deletes the resource, as another writer would: reads answer 404 until a write.
  public func remove() {
    present.withLock { $0 = false }
    modified.withLock { $0 += 1 }
  }

  /// Replaces the resource, as another writer would.
  @discardableResult
  public func replace(with body: String) -> HTTPDocument {
    let document = HTTPDocument(body: Data(body.utf8), contentType: self.document.contentType)
    state.withLock { $0 = document }
    present.withLock { $0 = true }
    modified.withLock { $0 += 1 }
    return document
  }

  /// The answer to `request`: what `serve(_:at:)` sends (a test wraps it to delay or gate it).
  public func respond(to request: RecordedRequest) -> HTTPResponse {
    switch request.method {
    case "PUT", "PATCH":
      let current = lastModified
      let outcome = state.withLock { document -> HTTPDocument? in
        // Checked under the document's lock, so a create races no other write.
        let exists = present.withLock { $0 }
        if request.header("If-None-Match")?.trimmingCharacters(in: .whitespaces) == "*", exists {
          return nil
        }
        if request.header("If-Match") != nil, !exists { return nil }
        if let tags = request.header("If-Match"),
          validators != .strongETag
            || !(tags.trimmingCharacters(in: .whitespaces) == "*"
              || tags.split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces) == document.etag
              })
        {
          // RFC 9110 §13.1.1: If-Match compares strongly; a weak tag never matches.
          return nil
        }
        if let since = request.header("If-Unmodified-Since"), since != current {
          return nil
        }
        document = HTTPDocument(body: onWrite(request.body), contentType: document.contentType)
        present.withLock { $0 = true }
        return document
      }
      guard let outcome else {
        return HTTPResponse(status: 412, headers: headers(for: document), body: "")
      }
      writes.withLock { $0 += 1 }
      modified.withLock { $0 += 1 }
      return HTTPResponse(status: 200, headers: headers(for: outcome), body: outcome.body)
    default:
      guard exists else { return HTTPResponse(status: 404, body: "") }
      var response = HTTPConnection.documentResponse(document, for: request)
      if validators != .strongETag {
        response.headers["ETag"] = nil
        for (name, value) in headers(for: document) { response.headers[name] = value }
      }
      return response
    }
  }
}

extension TestHTTPServer {
  /// Serves `resource` at `path`: reads and conditional writes (see `WritableResource`).
  public func serve(_ resource: WritableResource, at path: String) {
    setHandler(at: path) { request in resource.respond(to: request) }
  }
}
