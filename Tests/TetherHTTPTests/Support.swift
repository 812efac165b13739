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

/// The process's peak resident set size so far, in bytes (`VmHWM`), after `reset` sets it
/// back to the current size (`/proc/self/clear_refs`, Linux only).
enum PeakMemory {
  static func reset() -> Bool {
    FileManager.default.isWritableFile(atPath: "/proc/self/clear_refs")
      && (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8))
        != nil
  }

  static var bytes: Int? { field("VmHWM") }
  static var current: Int? { field("VmRSS") }

  private static func field(_ name: String) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
      return nil
    }
    for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
      let digits = line.split(separator: " ").compactMap { Int($0) }.first
      return digits.map { $0 * 1024 }
    }
    return nil
  }
}
