import Foundation

/// A source that keeps state of its own next to the ``RemoteConfig``'s cache and can ask the
/// config to fetch again ignoring the minimum interval.
///
/// `RemoteConfig.configure(source:settings:cacheURL:)` calls ``attach(cacheURL:markStale:)``
/// before it starts watching the source.
protocol CacheAttachedSource: RemoteConfigSource {
  /// Tells the source where the config's cache is (`nil`: none) and how to make the next
  /// `fetch()` go to the source.
  func attach(cacheURL: URL?, markStale: @escaping @Sendable () -> Void)
}
