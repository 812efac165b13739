/// The `config.*` scenarios.
func configBenchmarks() -> [Benchmark] {
  []
}
