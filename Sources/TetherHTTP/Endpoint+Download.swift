import Foundation

extension Endpoint where Body == NoBody, Response == URL {
  /// An endpoint whose response body is written to a new file as it arrives; the answer is
  /// that file's URL.
  ///
  /// ```swift
  /// static let export = Endpoint<ExportPath, NoBody, URL>.download("/exports/{id}.csv")
  ///
  /// let file = try await api.send(export, ExportPath(id: "2024"))
  /// try FileManager.default.moveItem(at: file, to: destination)
  /// ```
  ///
  /// - Memory stays bounded whatever the size: the body is read only as fast as it is written
  ///   (at most 256 KiB wait unread), and the client's ``HTTPClient/maximumResponseSize`` does
  ///   not apply. The head must arrive within ``HTTPClient/timeout``; then the server may stay
  ///   silent for at most ``HTTPClient/streamIdleTimeout``, however long the whole transfer
  ///   takes.
  /// - The file is new, named `<random>-<last path component>` in `directory` (the temporary
  ///   directory by default); moving or removing it is the caller's. When the transfer fails
  ///   or its task is cancelled, the partial file is removed.
  /// - Not retried (a download is a stream); redirects are followed. A status outside
  ///   `acceptableStatuses` is ``HTTPError/status(_:url:bodyExcerpt:retryAfter:)`` and writes
  ///   no file; a file that cannot be written is ``HTTPError/undecodable(url:path:reason:)``
  ///   naming the file.
  ///
  /// - Parameters:
  ///   - path: The path template.
  ///   - method: The method; `GET` by default.
  ///   - headers: Headers this endpoint adds to the client's.
  ///   - acceptableStatuses: The statuses whose body is saved; others are errors.
  ///   - accept: The `Accept` header sent when none is set; any type by default.
  ///   - directory: Where the file is created; `FileManager.default.temporaryDirectory` when
  ///     `nil`.
  public static func download(
    _ path: String, method: HTTPMethod = .get, headers: [String: String] = [:],
    acceptableStatuses: Range<Int> = 200..<300, accept: String = "*/*", into directory: URL? = nil
  ) -> Endpoint {
    let directory = directory ?? FileManager.default.temporaryDirectory
    var endpoint = Endpoint(
      method: method, path: path, headers: headers, acceptableStatuses: acceptableStatuses,
      accept: accept, encodeBody: { _ in nil },
      decodeResponse: { data in
        // A transport that hands over the whole body (a stand-in, an `.http` key's load).
        let file = Download.newFile(in: directory, for: nil)
        try data.write(to: file)
        return file
      })
    endpoint.receive = { client, request async throws(HTTPError) in
      try await Download.run(
        request, on: client, acceptableStatuses: acceptableStatuses, into: directory)
    }
    return endpoint
  }
}

/// Streaming one response body to a file.
enum Download {
  /// A new file name in `directory`: random, then the request's last path component, if any.
  static func newFile(in directory: URL, for url: URL?) -> URL {
    let last = url?.lastPathComponent ?? ""
    let suffix = last.isEmpty || last == "/" ? "download" : last
    return directory.appending(path: "\(UUID().uuidString)-\(suffix)", directoryHint: .notDirectory)
  }

  static func run(
    _ request: HTTPRequest, on client: HTTPClient, acceptableStatuses: Range<Int>,
    into directory: URL
  ) async throws(HTTPError) -> HTTPDecodedResponse<URL> {
    let redacted = HTTPError.redacted(request.url)
    let response = try await client.streamingResponse(for: request)
    let head = HTTPResponseMessage(status: response.status, headers: response.headers)
    guard acceptableStatuses.contains(response.status) else {
      var excerpt = Data()
      do {
        for try await chunk in response.body {
          excerpt.append(chunk)
          if excerpt.count >= 4096 { break }
        }
      } catch {
        // The status is the error worth reporting; the excerpt is best effort.
      }
      throw .status(
        response.status, url: redacted, bodyExcerpt: HTTPError.excerpt(of: excerpt),
        retryAfter: head.retryAfter)
    }
    let file = newFile(in: directory, for: request.url)
    let handle: FileHandle
    do {
      guard FileManager.default.createFile(atPath: file.path, contents: nil),
        let opened = FileHandle(forWritingAtPath: file.path)
      else { throw CocoaError(.fileWriteNoPermission) }
      handle = opened
    } catch {
      throw .undecodable(
        url: redacted, path: "", reason: "the file \(file.path) could not be created: \(error)")
    }
    do {
      defer { try? handle.close() }
      for try await chunk in response.body {
        do {
          try handle.write(contentsOf: chunk)
        } catch {
          throw HTTPError.undecodable(
            url: redacted, path: "", reason: "the file \(file.path) could not be written: \(error)")
        }
      }
      try Task.checkCancellation()
    } catch {
      try? FileManager.default.removeItem(at: file)
      throw Self.httpError(error, url: redacted)
    }
    return HTTPDecodedResponse(value: file, response: head)
  }

  /// `error`, thrown while the body arrived, as the ``HTTPError`` a download fails with.
  static func httpError(_ error: any Error, url: String) -> HTTPError {
    if let error = error as? HTTPError { return error }
    if error is CancellationError { return .cancelled }
    return .unreachable(url: url, reason: "\(error)")
  }
}
