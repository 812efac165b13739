import Foundation

// tether-bench: run with `swift run -c release tether-bench [--quick] [--filter PREFIX] [--format tsv]`.
if CommandLine.arguments.dropFirst().first == "--urlsession-https-worker" {
  exit(await runURLSessionHTTPSWorker(Array(CommandLine.arguments.dropFirst(2))))
}
let options = BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
let all =
  baselineBenchmarks() + streamsBenchmarks() + coreBenchmarks() + fileBenchmarks()
  + configBenchmarks() + httpBenchmarks() + httpsBenchmarks() + firebaseBenchmarks()
  + etcdBenchmarks()
let code = await BenchRunner(options: options).run(all)
await stopHTTPSBenchmarkServer()
exit(code)
