import Foundation

/// A file key created in an isolated scope keeps its file in the scope's ``InMemoryFiles``: the
/// same outcomes as on disk (missing or empty file → the default, a file that does not decode
/// is moved aside and reported, external changes reach holders), without touching the disk.
extension FileStorageKey {
  func load(from files: InMemoryFiles) -> Result<Value?, any Error> {
    guard let data = files.read(path), !data.isEmpty else { return .success(nil) }
    do {
      return .success(try decode(data))
    } catch {
      let aside = files.moveAside(path).map { URL(fileURLWithPath: $0, isDirectory: false) }
      return .failure(
        FileStorageKeyError.decodingFailed(url: url, preservedAt: aside, underlying: error))
    }
  }

  func subscribe(
    to files: InMemoryFiles, subscriber: SharedSubscriber<Value>
  )
    -> SharedSubscription
  {
    let url = url
    let decode = decode
    let stop = files.watch(path) { data in
      guard let data, !data.isEmpty else { return subscriber.yieldReturningInitialValue() }
      do {
        subscriber.yield(try decode(data))
      } catch {
        subscriber.yield(
          throwing: FileStorageKeyError.decodingFailed(
            url: url, preservedAt: nil, underlying: error))
      }
    }
    return SharedSubscription(stop)
  }

  func save(_ value: Value, to files: InMemoryFiles) -> Result<Void, any Error> {
    do {
      files.store(try encode(value), at: path)
      return .success(())
    } catch {
      return .failure(FileStorageKeyError.encodingFailed(url: url, underlying: error))
    }
  }

  func update(
    _ transform: @escaping @Sendable (inout Value) throws -> Void, initialValue: Value,
    in files: InMemoryFiles, completion: @escaping @Sendable (Result<Value, any Error>) -> Void
  ) {
    files.update(
      path,
      { data -> (Data, Value) in
        var value = initialValue
        if let data, !data.isEmpty {
          do {
            value = try decode(data)
          } catch {
            throw FileStorageKeyError.decodingFailed(url: url, preservedAt: nil, underlying: error)
          }
        }
        try transform(&value)
        do {
          return (try encode(value), value)
        } catch {
          throw FileStorageKeyError.encodingFailed(url: url, underlying: error)
        }
      }, completion: completion)
  }
}
