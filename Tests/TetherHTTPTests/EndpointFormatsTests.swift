import Foundation
import TestSupport
import Testing
import TetherHTTP

struct FilePath: Encodable, Hashable, Sendable {
  var name: String
}

struct UploadReceipt: Codable, Hashable, Sendable {
  var received: Int
}

/// Endpoints beyond JSON, against a real loopback server: text, raw bytes, a download to a
/// file and a multipart/form-data upload.
@Suite struct EndpointFormatsTests {
  @Test func aTextEndpointReturnsTheBodyAsText() async throws {
    let server = try TestHTTPServer()
    server.setDocument(
      "User-agent: *\nDisallow: /é\n", at: "/robots.txt", contentType: "text/plain")
    let client = HTTPClient(baseURL: server.baseURL)
    let robots = Endpoint<NoParameters, NoBody, String>.text("/robots.txt")
    #expect(try await client.send(robots) == "User-agent: *\nDisallow: /é\n")
    #expect(server.requests.first?.header("Accept") == "text/plain, */*;q=0.1")
  }

  @Test func textThatIsNotValidInItsEncodingIsUndecodable() async throws {
    let server = try TestHTTPServer()
    server.setDocument(Data([0x66, 0xFF, 0xFE]), at: "/log.txt", contentType: "text/plain")
    let client = HTTPClient(baseURL: server.baseURL)
    let log = Endpoint<NoParameters, NoBody, String>.text("/log.txt")
    await #expect {
      _ = try await client.send(log)
    } throws: { error in
      guard case .undecodable(_, _, let reason) = error as? HTTPError else { return false }
      return reason.contains("not valid")
    }
  }

  @Test func aDataEndpointReturnsTheBytesAsTheyArrived() async throws {
    let server = try TestHTTPServer()
    let bytes = Data((0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    server.setDocument(bytes, at: "/files/blob.bin", contentType: "application/octet-stream")
    let client = HTTPClient(baseURL: server.baseURL)
    let blob = Endpoint<FilePath, NoBody, Data>.data("/files/{name}")
    #expect(try await client.send(blob, FilePath(name: "blob.bin")) == bytes)
    #expect(server.requests.first?.header("Accept") == "*/*")
  }

  /// A body far over the client's response limit reaches the file: it was written as it
  /// arrived, never held whole.
  @Test func aDownloadStreamsTheBodyToANewFile() async throws {
    let server = try TestHTTPServer()
    let directory = try TemporaryDirectory()
    var bytes = Data(count: 12 << 20)
    bytes.withUnsafeMutableBytes { buffer in
      for index in stride(from: 0, to: buffer.count, by: 4096) {
        buffer[index] = UInt8(truncatingIfNeeded: index / 4096)
      }
    }
    server.setDocument(bytes, at: "/exports/big.bin", contentType: "application/octet-stream")
    let client = HTTPClient(baseURL: server.baseURL, maximumResponseSize: 1 << 20)
    let export = Endpoint<FilePath, NoBody, URL>.download(
      "/exports/{name}", into: directory.url)
    let answer = try await client.response(for: export, FilePath(name: "big.bin"))
    #expect(answer.status == 200)
    #expect(answer.value.deletingLastPathComponent().path == directory.url.path)
    #expect(answer.value.lastPathComponent.hasSuffix("-big.bin"))
    #expect(try Data(contentsOf: answer.value) == bytes)
  }

  @Test func aFailedDownloadIsAStatusErrorAndLeavesNoFile() async throws {
    let server = try TestHTTPServer()
    let directory = try TemporaryDirectory()
    server.inject(.status(404, body: "no such export"))
    let client = HTTPClient(baseURL: server.baseURL)
    let export = Endpoint<FilePath, NoBody, URL>.download("/exports/{name}", into: directory.url)
    await #expect {
      _ = try await client.send(export, FilePath(name: "gone.csv"))
    } throws: { error in
      guard case .status(404, _, let excerpt, _) = error as? HTTPError else { return false }
      return excerpt == "no such export"
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
  }

  @Test func aDownloadCutShortRemovesThePartialFile() async throws {
    let server = try TestHTTPServer()
    let directory = try TemporaryDirectory()
    let stream = HTTPStream(contentType: "application/octet-stream")
    server.inject(.stream(stream), at: "/exports/cut.bin")
    stream.send(Data(repeating: 1, count: 10_000))
    stream.abort()
    let client = HTTPClient(baseURL: server.baseURL)
    let export = Endpoint<FilePath, NoBody, URL>.download("/exports/{name}", into: directory.url)
    await #expect(throws: HTTPError.self) {
      _ = try await client.send(export, FilePath(name: "cut.bin"))
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
  }

  /// The server receives a well-formed RFC 7578 body: the boundary of the `Content-Type`, a
  /// `form-data` disposition per part, the file's exact bytes and type, the closing delimiter.
  @Test func aMultipartUploadSendsAWellFormedForm() async throws {
    let server = try TestHTTPServer()
    server.setDocument(#"{"received":2}"#, at: "/uploads")
    let directory = try TemporaryDirectory()
    let file = directory.url.appending(path: "photo.jpg")
    // Bytes a naive encoder would break: CR LF, dashes, NUL, every byte value.
    let photo = Data("\r\n--\r\n".utf8) + Data((0...255).map(UInt8.init)) + Data([0, 13, 10])
    try photo.write(to: file)
    let client = HTTPClient(baseURL: server.baseURL)
    let upload = Endpoint<NoParameters, MultipartForm, UploadReceipt>.multipart("/uploads")
    var form = MultipartForm()
    form.append("A \"day\" at the beach", name: "caption")
    form.append(contentsOf: file, name: "photo", contentType: "image/jpeg")
    let receipt = try await client.send(upload, body: form)
    #expect(receipt == UploadReceipt(received: 2))

    let request = try #require(server.requests(at: "/uploads").first)
    #expect(request.method == "POST")
    let contentType = try #require(request.header("Content-Type"))
    #expect(contentType == "multipart/form-data; boundary=\(form.boundary)")
    let parts = try #require(multipartParts(request.body, boundary: form.boundary))
    #expect(parts.count == 2)
    #expect(parts[0].headers == [#"Content-Disposition: form-data; name="caption""#])
    #expect(parts[0].body == Data(#"A "day" at the beach"#.utf8))
    #expect(
      parts[1].headers == [
        #"Content-Disposition: form-data; name="photo"; filename="photo.jpg""#,
        "Content-Type: image/jpeg",
      ])
    #expect(parts[1].body == photo)
  }

  @Test func namesWithQuotesOrLineBreaksArePercentEncoded() throws {
    var form = MultipartForm(boundary: "b")
    form.append(Data("x".utf8), name: "a\"b\r\nc", filename: "we\"ird\n.txt")
    let text = String(decoding: try form.encoded(), as: UTF8.self)
    #expect(
      text == "--b\r\nContent-Disposition: form-data; name=\"a%22b%0D%0Ac\"; "
        + "filename=\"we%22ird%0A.txt\"\r\nContent-Type: application/octet-stream\r\n\r\nx\r\n"
        + "--b--\r\n")
  }

  @Test func aFilePartThatCannotBeReadFailsBeforeSending() async throws {
    let server = try TestHTTPServer()
    let client = HTTPClient(baseURL: server.baseURL)
    let upload = Endpoint<NoParameters, MultipartForm, NoBody>.multipart("/uploads")
    var form = MultipartForm()
    form.append(contentsOf: URL(fileURLWithPath: "/nonexistent/tether-\(UUID())"), name: "f")
    await #expect {
      _ = try await client.send(upload, body: form)
    } throws: { error in
      guard case .invalidRequest = error as? HTTPError else { return false }
      return true
    }
    #expect(server.requests.isEmpty)
  }

  @Test func boundariesAreRandom() {
    #expect(MultipartForm().boundary != MultipartForm().boundary)
  }
}

/// A minimal RFC 2046 reader for the test: the parts between `--boundary` delimiters, each as
/// its header lines and its body. `nil` when the body is not well-formed.
func multipartParts(_ body: Data, boundary: String) -> [(headers: [String], body: Data)]? {
  let bytes = [UInt8](body)
  let delimiter = [UInt8]("--\(boundary)".utf8)
  let crlf: [UInt8] = [13, 10]
  func find(_ needle: [UInt8], from start: Int) -> Int? {
    guard needle.count <= bytes.count else { return nil }
    var index = start
    while index + needle.count <= bytes.count {
      if Array(bytes[index..<index + needle.count]) == needle { return index }
      index += 1
    }
    return nil
  }
  guard find(delimiter, from: 0) == 0 else { return nil }
  var parts: [(headers: [String], body: Data)] = []
  var cursor = delimiter.count
  while true {
    let after = Array(bytes[cursor..<min(cursor + 2, bytes.count)])
    if after == [45, 45] {  // "--": the closing delimiter, then CRLF and nothing else
      return Array(bytes[(cursor + 2)...]) == crlf ? parts : nil
    }
    guard after == crlf else { return nil }
    cursor += 2
    guard let headersEnd = find(crlf + crlf, from: cursor) else { return nil }
    let headers = String(decoding: bytes[cursor..<headersEnd], as: UTF8.self)
      .components(separatedBy: "\r\n")
    let bodyStart = headersEnd + 4
    guard let next = find(crlf + delimiter, from: bodyStart) else { return nil }
    parts.append((headers, Data(bytes[bodyStart..<next])))
    cursor = next + 2 + delimiter.count
  }
}
