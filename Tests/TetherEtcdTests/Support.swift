import Foundation
import Streams
import TestSupport
import Testing
import Tether
import TetherEtcd

/// Whether the etcd tests can run (etcd installed: `Scripts/install-test-deps`).
let etcdInstalled = EtcdServer.executable != nil

/// One single-member etcd shared by the tests that do not stop or pause it; each test uses
/// its own keys.
enum SharedEtcd {
  private static let server = Task { try await EtcdServer.start() }
  static func start() async throws -> EtcdServer { try await server.value }
}

/// A key no other test uses.
func uniqueKey(_ name: String = #function) -> String {
  "/tether-tests/\(name.prefix { $0 != "(" })/\(UUID().uuidString)"
}

/// A cluster client for `server` ("another machine" when a test makes several).
func client(
  _ server: EtcdServer, endpoints: [Int]? = nil, username: String? = nil,
  password: String? = nil
) -> EtcdCluster {
  EtcdCluster(
    endpoints: (endpoints ?? Array(server.members.indices)).map { server.members[$0].clientURL },
    username: username, password: password, timeout: .seconds(2),
    watchCheckInterval: .seconds(1))
}

extension EtcdServer {
  /// Writes `value` at `key` directly through the gateway (another writer), on any member.
  @discardableResult
  func put(_ key: String, _ value: String) async -> [String: Any]? {
    await anyMember(
      "/v3/kv/put",
      #"{"key":"\#(Data(key.utf8).base64EncodedString())","value":"\#(Data(value.utf8).base64EncodedString())"}"#
    )
  }

  /// Deletes `key` directly through the gateway.
  func delete(_ key: String) async {
    await anyMember("/v3/kv/deleterange", #"{"key":"\#(Data(key.utf8).base64EncodedString())"}"#)
  }

  /// The stored value of `key`, read directly through the gateway.
  func stored(_ key: String) async -> String? {
    guard
      let answer = await anyMember(
        "/v3/kv/range", #"{"key":"\#(Data(key.utf8).base64EncodedString())"}"#),
      let kvs = answer["kvs"] as? [[String: Any]], let value = kvs.first?["value"] as? String,
      let data = Data(base64Encoded: value)
    else { return nil }
    return String(decoding: data, as: UTF8.self)
  }

  @discardableResult
  func anyMember(_ path: String, _ body: String) async -> [String: Any]? {
    for member in members {
      if let answer = await post(member, path, body) { return answer }
    }
    return nil
  }

  /// The comma-separated client URLs, for a child process.
  var endpointList: String { clientURLs.map(\.absoluteString).joined(separator: ",") }
}

/// Collects every value a publisher emits.
final class Recorder<Value: Sendable>: Sendable {
  private let values = LockedValues<Value>()
  private let token: AnyCancellable

  init(_ shared: Shared<Value>) {
    let values = values
    token = shared.publisher.sink { values.append($0) }
  }

  var all: [Value] { values.all }
}

final class LockedValues<Value: Sendable>: @unchecked Sendable {
  // @unchecked: `storage` is only touched under `lock`.
  private let lock = NSLock()
  private var storage: [Value] = []
  func append(_ value: Value) { lock.withLock { storage.append(value) } }
  var all: [Value] { lock.withLock { storage } }
}
