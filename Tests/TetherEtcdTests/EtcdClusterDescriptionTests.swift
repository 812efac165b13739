import Foundation
import Testing
import TetherEtcd

/// What printing a cluster shows: never the password, the token or the client key.
@Suite struct EtcdClusterDescriptionTests {
  // Guards: `dump` of a cluster (or of a value holding one) showed the stored password.
  @Test func printingAndDumpingAClusterNeverShowTheSecrets() {
    let cluster = EtcdCluster(
      endpoints: [URL(string: "https://127.0.0.1:2379")!], username: "alice",
      password: "pa55-word", clientCertificate: "CERTIFICATE", clientKey: "KEY-MATERIAL",
      clientKeyPassphrase: "key-passphrase")
    var dumped = ""
    dump(cluster, to: &dumped)
    for text in [String(describing: cluster), String(reflecting: cluster), dumped] {
      for secret in ["pa55-word", "KEY-MATERIAL", "key-passphrase"] {
        #expect(!text.contains(secret), "\(text)")
      }
    }
    #expect(dumped.contains("alice"))
    #expect(dumped.contains("127.0.0.1:2379"))
  }
}
