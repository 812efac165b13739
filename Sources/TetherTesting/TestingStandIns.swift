import Tether
import TetherEtcd

/// TetherTesting's stand-ins for networked objects, installed into Tether's isolated scopes.
///
/// Production modules keep only the seam (`ScopedStandIns`) and a fallback that refuses the
/// network; the stand-ins live here, so a program that never links TetherTesting carries none
/// of them. They are installed for the whole process the first time TetherTesting is used: when
/// a test declares the `.isolatedSharedState` trait, or calls ``InMemoryEtcd`` or
/// ``RemoteConfigTestValues``. From then on, every isolated scope (the trait's, and any
/// `withSharedStorage(.isolated)`) gives `.etcd` keys an in-memory cluster.
enum TestingStandIns {
  private static let installation: Void = {
    ScopedStandIns<EtcdCluster>.provide(EtcdMemoryStores.standIn(for:))
  }()

  /// Installs the stand-ins (once; later calls do nothing).
  static func install() { _ = installation }
}
