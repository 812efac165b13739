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
  static func run(_ url: URL, limit: Int) async throws -> (outcome: String, growth: Int) {
    let child = try ChildProcess([url.absoluteString, String(limit)], executableURL: executable)
    let baseline = try await child.waitForLine(containing: "baseline ")
    let outcome = try await child.waitForLine(containing: "outcome ", timeout: .seconds(60))
    let peak = try await child.waitForLine(containing: "peak ")
    _ = try await child.waitForExit()
    func number(_ line: String) -> Int { Int(line.split(separator: " ").last ?? "") ?? 0 }
    return (String(outcome.dropFirst("outcome ".count)), number(peak) - number(baseline))
  }

  /// The probe's executable, built beside the test bundle.
  static var executable: URL {
    get throws {
      try ChildProcess.locateExecutable().deletingLastPathComponent()
        .appendingPathComponent("tether-http-probe")
    }
  }

  /// The outcome of one GET to `url` from a process that links only TetherHTTP, and the path
  /// of every shared library mapped into that process afterwards.
  static func mappedLibraries(
    afterGetting url: URL
  ) async throws -> (outcome: String, libraries: [String]) {
    let child = try ChildProcess(["libraries", url.absoluteString], executableURL: executable)
    let outcome = try await child.waitForLine(containing: "outcome ", timeout: .seconds(60))
    var libraries: [String] = []
    while true {
      let line = try await child.nextLine()
      if line == "end" { break }
      if line.hasPrefix("mapped ") { libraries.append(String(line.dropFirst("mapped ".count))) }
    }
    _ = try await child.waitForExit()
    return (String(outcome.dropFirst("outcome ".count)), libraries)
  }
}
