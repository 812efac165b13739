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
/// ```
///
/// All methods are thread-safe.
public final class WritableResource: Sendable {
  private let state: LockedState<HTTPDocument>
  private let writes = LockedState(0)

  /// Creates the resource with `body` as its first version.
  public init(_ body: String, contentType: String = "application/json") {
    state = LockedState(HTTPDocument(body: Data(body.utf8), contentType: contentType))
  }

  /// The current version.
  public var document: HTTPDocument { state.withLock { $0 } }

  /// How many writes the server accepted.
  public var acceptedWrites: Int { writes.withLock { $0 } }

  /// Replaces the resource, as another writer would.
  @discardableResult
  public func replace(with body: String) -> HTTPDocument {
    let document = HTTPDocument(body: Data(body.utf8), contentType: self.document.contentType)
    state.withLock { $0 = document }
    return document
  }

  func respond(to request: RecordedRequest) -> HTTPResponse {
    switch request.method {
    case "PUT", "PATCH":
      let outcome = state.withLock { document -> HTTPDocument? in
        if let tags = request.header("If-Match"),
          !(tags.trimmingCharacters(in: .whitespaces) == "*"
            || tags.split(separator: ",").contains {
              $0.trimmingCharacters(in: .whitespaces) == document.etag
            })
        {
          return nil
        }
        document = HTTPDocument(body: request.body, contentType: document.contentType)
        return document
      }
      guard let outcome else {
        return HTTPResponse(status: 412, headers: ["ETag": document.etag], body: "")
      }
      writes.withLock { $0 += 1 }
      return HTTPResponse(
        status: 200, headers: ["ETag": outcome.etag, "Content-Type": outcome.contentType],
        body: outcome.body)
    default:
      return HTTPConnection.documentResponse(document, for: request)
    }
  }
}

extension TestHTTPServer {
  /// Serves `resource` at `path`: reads and conditional writes (see `WritableResource`).
  public func serve(_ resource: WritableResource, at path: String) {
    setHandler(at: path) { request in resource.respond(to: request) }
  }
}
