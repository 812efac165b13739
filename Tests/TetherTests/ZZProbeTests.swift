import Foundation
import Testing

@Test func zzProbeProcessInfo() {
  let info = ProcessInfo.processInfo
  print("PROBE args:", info.arguments)
  print("PROBE exe:", Bundle.main.executablePath ?? "nil", Bundle.main.bundlePath)
  print("PROBE allBundles:", Bundle.allBundles.map(\.bundlePath))
  for (k, v) in info.environment.sorted(by: { $0.key < $1.key })
  where k.lowercased().contains("test") || k.lowercased().contains("xc") || k.hasPrefix("SWIFT") {
    print("PROBE env:", k, "=", v)
  }
}
