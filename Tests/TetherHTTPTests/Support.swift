import Foundation
import TestSupport
import TetherHTTP

struct Item: Codable, Hashable, Sendable {
  var id: Int
  var name: String
}

struct ItemPath: Encodable, Hashable, Sendable {
  var id: String
  var expand: Bool? = nil
}

enum Catalog {
  static let item = Endpoint<ItemPath, NoBody, Item>.get("/items/{id}")
  static let items = Endpoint<NoParameters, NoBody, [Item]>.get("/items")
  static let create = Endpoint<NoParameters, Item, Item>.post(
    "/items", acceptableStatuses: 200..<300)
  static let replace = Endpoint<ItemPath, Item, Item>.put("/items/{id}")
}

func json(_ value: some Encodable) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = .sortedKeys
  return String(decoding: try! encoder.encode(value), as: UTF8.self)
}

/// Runs `tether-http-probe` against `url` and reads back what it printed.
enum Probe {
  /// The request's outcome (`tooLarge`, or a description) and how much the probe's peak
  /// resident memory grew above its baseline, in bytes.
  static func run(
    _ url: URL, limit: Int, overSockets: Bool = true
  ) async throws -> (outcome: String, growth: Int) {
    let executable = try ChildProcess.locateExecutable().deletingLastPathComponent()
      .appendingPathComponent("tether-http-probe")
    let child = try ChildProcess(
      [url.absoluteString, String(limit), overSockets ? "sockets" : "urlsession"],
      executableURL: executable)
    let baseline = try await child.waitForLine(containing: "baseline ")
    let outcome = try await child.waitForLine(containing: "outcome ", timeout: .seconds(60))
    let peak = try await child.waitForLine(containing: "peak ")
    _ = try await child.waitForExit()
    func number(_ line: String) -> Int { Int(line.split(separator: " ").last ?? "") ?? 0 }
    return (String(outcome.dropFirst("outcome ".count)), number(peak) - number(baseline))
  }
}
