/// A key whose saves Tether hands over at once, without waiting for the previous one to
/// resume: the key orders and throttles them itself (holding a throttled save's continuation
/// until its window ends, so that waiting for it would delay a `save()` by the window), and maps
/// the versions of its own writes in flight itself.
///
/// `.fileStorage` is one, until its write queue decides with `VersionEngine` too (issue #32).
/// Every other key gets one save in flight at a time.
package protocol PipelinedSaveKey {}

extension FileStorageKey: PipelinedSaveKey {}
extension SharedKeyDefault: PipelinedSaveKey where Base: PipelinedSaveKey {}
