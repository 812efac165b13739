import Foundation

// tether-bench: run with `swift run -c release tether-bench [--quick] [--filter PREFIX] [--format tsv]`.
let options = BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
let all =
  baselineBenchmarks() + streamsBenchmarks() + coreBenchmarks() + fileBenchmarks()
  + configBenchmarks() + httpBenchmarks() + firebaseBenchmarks() + etcdBenchmarks()
let code = await BenchRunner(options: options).run(all)
exit(code)
