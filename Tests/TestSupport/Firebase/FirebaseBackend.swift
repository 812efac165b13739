import Foundation

extension FirebaseFakeServer {
  /// The fake's state and request handling, apart from the server so that handlers do not keep
  /// the server alive.
  final class Backend: Sendable {
    // Guards the template, the installations and tokens, and the realtime stream.
    let state = LockedState(State())

    // MARK: - Installations

    /// `POST …/installations` (register) on the registration path; registers the token path of
    /// the new FID on `server`.
    func register(
      _ request: RecordedRequest, apiKey: String, server: TestHTTPServer
    ) -> HTTPResponse {
      guard request.method == "POST" else { return HTTPResponse(status: 405) }
      guard request.header("x-goog-api-key") == apiKey else {
        return Self.error(
          400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT")
      }
      guard let body = Self.object(request.body), let fid = body["fid"] as? String, !fid.isEmpty,
        body["authVersion"] as? String == "FIS_v2", body["appId"] is String
      else {
        return Self.error(400, "fid, authVersion FIS_v2 and appId are required", "INVALID_ARGUMENT")
      }
      let (refresh, token, lifetime) = state.withLock { state in
        state.registrations += 1
        let number = state.nextNumber
        state.nextNumber += 1
        let refresh = "refresh-\(number)"
        let token = "auth-\(number)"
        state.refreshTokens[refresh] = fid
        state.authTokens[token] = (fid, Date().addingTimeInterval(Double(state.tokenLifetime)))
        return (refresh, token, state.tokenLifetime)
      }
      let path = request.path + "/\(fid)/authTokens:generate"
      let backend = self
      server.setHandler(at: path) { request in
        backend.generateToken(request, fid: fid, apiKey: apiKey)
      }
      return Self.json(
        200,
        [
          "name": "projects/1234567890/installations/\(fid)", "fid": fid, "refreshToken": refresh,
          "authToken": ["token": token, "expiresIn": "\(lifetime)s"],
        ])
    }

    func generateToken(_ request: RecordedRequest, fid: String, apiKey: String) -> HTTPResponse {
      guard request.method == "POST" else { return HTTPResponse(status: 405) }
      guard request.header("x-goog-api-key") == apiKey else {
        return Self.error(400, "API key not valid.", "INVALID_ARGUMENT")
      }
      let authorization = request.header("Authorization") ?? ""
      guard authorization.hasPrefix("FIS_v2 ") else {
        return Self.error(401, "missing FIS_v2 authorization", "UNAUTHENTICATED")
      }
      let refresh = String(authorization.dropFirst("FIS_v2 ".count))
      return state.withLock { state in
        guard let owner = state.refreshTokens[refresh] else {
          return Self.error(404, "installation not found", "NOT_FOUND")
        }
        guard owner == fid else { return Self.error(401, "wrong refresh token", "UNAUTHENTICATED") }
        state.tokenRefreshes += 1
        let token = "auth-\(state.nextNumber)"
        state.nextNumber += 1
        state.authTokens[token] = (fid, Date().addingTimeInterval(Double(state.tokenLifetime)))
        return Self.json(200, ["token": token, "expiresIn": "\(state.tokenLifetime)s"])
      }
    }

    // MARK: - Fetch

    func fetch(_ request: RecordedRequest, apiKey: String) -> HTTPResponse {
      guard request.method == "POST" else { return HTTPResponse(status: 405) }
      let keyParameter = "key=\(apiKey)"
      guard
        request.query?.utf8.split(separator: UInt8(ascii: "&")).contains(where: {
          $0.elementsEqual(keyParameter.utf8)
        }) == true
      else {
        return Self.error(
          400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT")
      }
      // A client polls with the same body until its installation or signals change: the fake
      // parses each distinct body once, so that answering a poll costs it about what serving
      // a document costs the plain test server, and benchmarks measure the client.
      let fetch: ParsedFetch
      if let last = state.withLock({ $0.lastFetch }), last.body == request.body {
        fetch = last.parsed
      } else {
        guard let body = Self.object(request.body), let fid = body["app_instance_id"] as? String
        else {
          return Self.error(400, "app_instance_id is required", "INVALID_ARGUMENT")
        }
        // `customSignals` is a map of strings: Google's service rejects any other JSON type
        // (a number, a boolean) with 400, as every SDK sends numbers as their decimal text.
        let rawSignals = body["custom_signals"] ?? [String: Any]()
        guard let signalObject = rawSignals as? [String: Any] else {
          return Self.error(400, "Invalid value at 'custom_signals'", "INVALID_ARGUMENT")
        }
        var signals: [String: String] = [:]
        for (key, value) in signalObject {
          // JSONSerialization gives NSNumber for numbers and booleans, which bridge to String
          // only through a cast that fails: only real strings pass.
          guard let text = value as? String, !(value is NSNumber) else {
            return Self.error(
              400,
              "Invalid value at 'custom_signals[\(key)]' (type.googleapis.com/"
                + "google.protobuf.StringValue), \(value)", "INVALID_ARGUMENT")
          }
          signals[key] = text
        }
        fetch = ParsedFetch(
          fid: fid, bodyToken: body["app_instance_id_token"] as? String, signals: signals)
        state.withLock { $0.lastFetch = (request.body, fetch) }
      }
      let fid = fetch.fid
      let signals = fetch.signals
      let token =
        request.header("X-Goog-Firebase-Installations-Auth") ?? fetch.bodyToken ?? ""
      return state.withLock { state in
        guard let issued = state.authTokens[token], issued.fid == fid, issued.expiry > Date()
        else {
          return Self.error(401, "the installation auth token is invalid", "UNAUTHENTICATED")
        }
        var template = state.template
        if state.lag > 0 {
          state.lag -= 1
          template = state.previousTemplate
        }
        guard let template else {
          return Self.json(200, ["state": "NO_TEMPLATE"], etag: "etag-1234567890-none")
        }
        let matching = template.conditions.indices.filter { index in
          let condition = template.conditions[index]
          return signals[condition.signal].map { Self.signal($0, matches: condition.equals) }
            ?? false
        }
        // The entries are evaluated only when they are needed: for a new tag, or an answer
        // that carries them (a 304 does not).
        let evaluated = {
          var entries = template.entries
          var decided = Set<String>()
          for condition in matching.map({ template.conditions[$0] }) {
            for (key, value) in condition.values where !decided.contains(key) {
              entries[key] = value
              decided.insert(key)
            }
          }
          return entries
        }
        // The tag of a version's evaluated entries is computed once, as a real backend
        // would: the matching conditions decide the entries.
        let tagKey = TagKey(version: template.version, matching: matching)
        let etag: String
        if let known = state.etags[tagKey] {
          etag = known
        } else {
          etag = Self.etag(version: template.version, entries: evaluated())
          state.etags[tagKey] = etag
        }
        if request.header("If-None-Match") == etag {
          switch state.notModifiedAnswer {
          case .status304: return HTTPResponse(status: 304, headers: ["ETag": etag])
          case .noChangeState:
            return Self.json(
              200, ["state": "NO_CHANGE", "templateVersion": "\(template.version)"], etag: etag)
          }
        }
        return Self.json(
          200,
          [
            "entries": evaluated(), "state": "UPDATE", "templateVersion": "\(template.version)",
            "personalizationMetadata": [String: Any](), "experimentDescriptions": [Any](),
          ], etag: etag)
      }
    }

    /// A condition on a signal compares numerically when both sides are numbers (`"5"` matches
    /// `"5.0"`), as the service's numeric operators do, and as text otherwise.
    static func signal(_ value: String, matches expected: String) -> Bool {
      if let number = Double(value), let target = Double(expected) { return number == target }
      return value == expected
    }

    /// What decides a fetch's entries, and so its ETag.
    struct TagKey: Hashable, Sendable {
      var version: Int
      var matching: [Int]
    }

    /// What the fake reads from a fetch body.
    struct ParsedFetch: Sendable {
      var fid: String
      var bodyToken: String?
      /// The custom signals, as text (conditions compare text).
      var signals: [String: String]
    }

    // MARK: - Encoding

    /// A stable tag for a template version and its evaluated entries (FNV-1a).
    static func etag(version: Int, entries: [String: String]) -> String {
      var hash: UInt64 = 0xcbf2_9ce4_8422_2325
      for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
        for byte in Array("\(key)=\(value);".utf8) {
          hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
      }
      return "etag-1234567890-firebase-fetch-v\(version)-\(String(hash, radix: 16))"
    }

    static func object(_ data: Data) -> [String: Any]? {
      (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    static func json(_ status: Int, _ object: [String: Any], etag: String? = nil) -> HTTPResponse {
      var headers = ["Content-Type": "application/json; charset=UTF-8"]
      if let etag { headers["ETag"] = etag }
      return HTTPResponse(
        status: status, headers: headers,
        body: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
          ?? Data())
    }

    static func error(_ code: Int, _ message: String, _ status: String) -> HTTPResponse {
      json(code, ["error": ["code": code, "message": message, "status": status]])
    }
  }
}
