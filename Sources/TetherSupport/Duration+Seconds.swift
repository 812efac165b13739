// Duration arithmetic in seconds, for the back-off and the HTTP engine's timeouts.
extension Duration {
  /// The duration in seconds.
  package var seconds: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }

  /// A duration of `seconds`, clamped so that no value (infinite, negative, huge) can trap.
  package static func clamped(seconds: Double) -> Duration {
    guard seconds.isFinite, seconds > 0 else { return .zero }
    return .milliseconds(Int64(min(seconds, 1e9) * 1000))
  }
}
