import Foundation
import Testing
import Tether
import TetherEtcd
import TetherHTTP
import TetherRemoteConfig
import TetherTesting

struct ShopStatus: Codable, Equatable, Sendable { var open = false }

enum ShopAPI {
  static let status = Endpoint<NoParameters, NoBody, ShopStatus>.get("/status")
}

extension ConfigKeys {
  static let expressCheckout = ConfigKey<Bool>("express_checkout", default: false)
}

/// The model as the app writes it: its client and cluster come from outside.
struct ShopModel {
  @SharedReader var status: ShopStatus
  @Shared var visits: Int
  @SharedReader(.remoteConfig(.expressCheckout)) var expressCheckout

  init(api: HTTPClient, cluster: EtcdCluster) {
    _status = SharedReader(
      wrappedValue: ShopStatus(), .http(ShopAPI.status, client: api, every: .seconds(30)))
    _visits = Shared(wrappedValue: 0, .etcd("/shop/visits", in: cluster))
  }

  func recordVisit() async throws -> Int {
    try await $visits.update { visits in
      visits += 1
      return visits
    }
  }
}

@Test(.isolatedSharedState) func aModelWithAnHTTPKeyAnEtcdKeyAndAFlagIsTestedWithoutAnyServer()
  async throws
{
  // The API: canned answers, recorded requests.
  let server = HTTPStubTransport()
  server.on(.get, "/status", .json(ShopStatus(open: true)))
  let api = HTTPClient(baseURL: URL(string: "https://shop.example.com")!, transport: server)
  // etcd: the production endpoints are never reached; the scope's in-memory cluster is.
  let cluster = EtcdCluster(endpoints: [URL(string: "http://etcd.internal:2379")!])
  let etcd = InMemoryEtcd.standingIn(for: cluster)
  etcd.put("/shop/visits", "41")
  // The flag: the value this test sets, never a fetch.
  let flags = RemoteConfigTestValues.standingIn()

  let shop = ShopModel(api: api, cluster: cluster)
  try await shop.$status.load()
  #expect(shop.status.open)
  #expect(server.requests(.get, "/status").count >= 1)

  #expect(try await shop.recordVisit() == 42)  // compare-and-swap on the stored 41
  #expect(etcd.stored("/shop/visits") == "42")

  #expect(shop.expressCheckout == false)
  flags.set(.expressCheckout, to: true)
  #expect(shop.expressCheckout)
}
