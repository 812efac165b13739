/// The `file.*` scenarios.
func fileBenchmarks() -> [Benchmark] {
  []
}
