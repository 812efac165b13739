/// The `core.*` scenarios.
func coreBenchmarks() -> [Benchmark] {
  []
}
