import Foundation

// Endpoints whose response is not JSON: text and raw bytes; and the multipart/form-data upload.
// Downloads to a file are in `Endpoint+Download.swift`.

extension Endpoint where Body == NoBody, Response == String {
  /// An endpoint whose response is text, such as a `robots.txt`, a CSV export or a log.
  ///
  /// ```swift
  /// static let robots = Endpoint<NoParameters, NoBody, String>.text("/robots.txt")
  /// let rules = try await api.send(robots)
  /// ```
  ///
  /// The whole body is read (within the client's ``HTTPClient/maximumResponseSize``) and
  /// decoded with `encoding`; a body that is not valid in it is
  /// ``HTTPError/undecodable(url:path:reason:)``. An empty body is the empty string.
  ///
  /// - Parameters:
  ///   - path: The path template, such as `/logs/{day}.txt`.
  ///   - method: The method; `GET` by default.
  ///   - headers: Headers this endpoint adds to the client's.
  ///   - acceptableStatuses: The statuses whose body is the answer; others are errors.
  ///   - accept: The `Accept` header sent when none is set.
  ///   - encoding: The text's encoding; UTF-8 by default.
  public static func text(
    _ path: String, method: HTTPMethod = .get, headers: [String: String] = [:],
    acceptableStatuses: Range<Int> = 200..<300, accept: String = "text/plain, */*;q=0.1",
    encoding: String.Encoding = .utf8
  ) -> Endpoint {
    Endpoint(
      method: method, path: path, headers: headers, acceptableStatuses: acceptableStatuses,
      accept: accept, encodeBody: { _ in nil },
      decodeResponse: { data in
        guard let text = String(data: data, encoding: encoding) else {
          throw TextDecodingFailure(encoding: encoding)
        }
        return text
      })
  }
}

extension Endpoint where Body == NoBody, Response == Data {
  /// An endpoint whose response is its body's bytes as they arrived, such as an image or a
  /// protobuf message.
  ///
  /// ```swift
  /// static let avatar = Endpoint<UserPath, NoBody, Data>.data("/users/{user}/avatar")
  /// let png = try await api.send(avatar, UserPath(user: "ada"))
  /// ```
  ///
  /// The whole body is held in memory, within the client's
  /// ``HTTPClient/maximumResponseSize``; for a large file use
  /// ``download(_:method:headers:acceptableStatuses:accept:into:)``, which writes it to disk
  /// as it arrives.
  ///
  /// - Parameters:
  ///   - path: The path template.
  ///   - method: The method; `GET` by default.
  ///   - headers: Headers this endpoint adds to the client's.
  ///   - acceptableStatuses: The statuses whose body is the answer; others are errors.
  ///   - accept: The `Accept` header sent when none is set; any type by default.
  public static func data(
    _ path: String, method: HTTPMethod = .get, headers: [String: String] = [:],
    acceptableStatuses: Range<Int> = 200..<300, accept: String = "*/*"
  ) -> Endpoint {
    Endpoint(
      method: method, path: path, headers: headers, acceptableStatuses: acceptableStatuses,
      accept: accept, encodeBody: { _ in nil }, decodeResponse: { $0 })
  }
}

extension Endpoint where Body == MultipartForm, Response: Decodable {
  /// An endpoint that uploads a ``MultipartForm`` (`multipart/form-data`, RFC 7578), as an
  /// HTML form with a file input does, and decodes a JSON answer.
  ///
  /// ```swift
  /// static let upload = Endpoint<NoParameters, MultipartForm, Receipt>.multipart("/uploads")
  ///
  /// var form = MultipartForm()
  /// form.append("holiday", name: "album")
  /// form.append(contentsOf: photoURL, name: "photo", contentType: "image/jpeg")
  /// let receipt = try await api.send(upload, body: form)
  /// ```
  ///
  /// The request's `Content-Type` carries the form's boundary. Use `NoBody` as `Response` to
  /// ignore the answer's body. A file part that cannot be read is
  /// ``HTTPError/invalidRequest(_:)``, before anything is sent. The whole body is held in
  /// memory while it is sent (see ``MultipartForm`` for the bound).
  ///
  /// - Parameters:
  ///   - path: The path template.
  ///   - method: The method; `POST` by default.
  ///   - headers: Headers this endpoint adds to the client's.
  ///   - acceptableStatuses: The statuses whose body is decoded; others are errors.
  ///   - decoder: Decodes the JSON answer.
  public static func multipart(
    _ path: String, method: HTTPMethod = .post, headers: [String: String] = [:],
    acceptableStatuses: Range<Int> = 200..<300, decoder: JSONDecoder = JSONDecoder()
  ) -> Endpoint {
    Endpoint(
      method: method, path: path, headers: headers, acceptableStatuses: acceptableStatuses,
      encodeBody: { form in (try form.encoded(), form.contentType) },
      decodeResponse: JSONCoding.decoder(Response.self, decoder))
  }
}

/// A text body that is not valid in the endpoint's encoding: the reason of its
/// ``HTTPError/undecodable(url:path:reason:)``.
struct TextDecodingFailure: Error, CustomStringConvertible {
  let encoding: String.Encoding
  var description: String { "the body is not valid \(encoding) text" }
}
