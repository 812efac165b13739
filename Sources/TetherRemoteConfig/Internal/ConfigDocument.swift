import Foundation

/// Reads a config document: a JSON object of entries.
enum ConfigDocument {
  static func entries(from data: Data) throws(RemoteConfigError) -> [String: JSONValue] {
    let document: JSONValue
    do {
      document = try JSONValue(parsing: data)
    } catch {
      throw .malformedJSON("\(error)")
    }
    guard case .object(let entries) = document else {
      throw .notAnObject(found: document.kindName)
    }
    return entries
  }
}
