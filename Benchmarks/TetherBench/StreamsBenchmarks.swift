/// The `streams.*` scenarios.
func streamsBenchmarks() -> [Benchmark] {
  []
}
