import Foundation

struct BenchOptions {
  var quick = false
  var filters: [String] = []
  /// Exact ids to run without their baselines (`--only`), for a profiler.
  var only: [String] = []
  var tsv = false

  static func parse(_ arguments: [String]) -> BenchOptions {
    var options = BenchOptions()
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      switch argument {
      case "--quick": options.quick = true
      case "--filter":
        guard let prefix = iterator.next() else { usage("--filter needs a prefix") }
        options.filters.append(prefix)
      case "--only":
        guard let id = iterator.next() else { usage("--only needs a scenario id") }
        options.only.append(id)
      case "--format":
        guard let format = iterator.next(), format == "tsv" || format == "table" else {
          usage("--format takes tsv or table")
        }
        options.tsv = format == "tsv"
      case "-h", "--help": usage(nil)
      default: usage("unknown argument \(argument)")
      }
    }
    return options
  }

  static func usage(_ problem: String?) -> Never {
    if let problem { FileHandle.standardError.write(Data("tether-bench: \(problem)\n".utf8)) }
    print(
      """
      usage: tether-bench [--quick] [--filter PREFIX]... [--only ID]... [--format table|tsv]
        --quick          few samples (a smoke run)
        --filter PREFIX  run only scenarios whose id starts with PREFIX (repeatable);
                         the baselines they compare with run too
        --only ID        run exactly this scenario, without its baseline (repeatable):
                         for a profiler such as `perf record`
        --format tsv     id, median_ns, p90_ns, baseline_id, ratio separated by tabs
      """)
    exit(problem == nil ? 0 : 2)
  }
}

struct BenchResult {
  let id: String
  let median: Double
  let p90: Double
  let baseline: String?
  let note: String
  /// The median of the baseline's samples taken alternately with this scenario's, which
  /// the ratio is computed against (`nil` without a baseline).
  var pairedBaselineMedian: Double? = nil
}

struct BenchRunner {
  let options: BenchOptions

  var warmups: Int { options.quick ? 1 : 3 }
  var samples: Int { options.quick ? 3 : 15 }

  func run(_ benchmarks: [Benchmark]) async -> Int32 {
    let selected = select(benchmarks)
    if !options.tsv {
      print(
        pad("scenario", 36) + pad("median ns", 14, right: true) + pad("p90 ns", 14, right: true)
          + "  " + pad("baseline", 26) + pad("ratio", 9, right: true))
    } else {
      print("id\tmedian_ns\tp90_ns\tbaseline_id\tratio")
    }
    var results: [String: BenchResult] = [:]
    var checksum: UInt64 = 0
    var failed = false
    let byID = Dictionary(selected.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    for benchmark in selected {
      do {
        let (result, sum) = try await measure(
          benchmark, pairedWith: benchmark.baseline.flatMap { byID[$0] })
        checksum &+= sum
        results[benchmark.id] = result
        printRow(result, results: results)
      } catch {
        failed = true
        FileHandle.standardError.write(Data("\(benchmark.id): failed: \(error)\n".utf8))
      }
    }
    if !options.tsv { print("checksum \(checksum)") }
    return failed ? 1 : 0
  }

  /// The scenarios the filters select, plus the baselines they name, in declaration order.
  func select(_ benchmarks: [Benchmark]) -> [Benchmark] {
    if !options.only.isEmpty { return benchmarks.filter { options.only.contains($0.id) } }
    guard !options.filters.isEmpty else { return benchmarks }
    var wanted = Set(
      benchmarks.filter { b in options.filters.contains { b.id.hasPrefix($0) } }.map(\.id))
    var changed = true
    while changed {
      changed = false
      for b in benchmarks where wanted.contains(b.id) {
        if let baseline = b.baseline, !wanted.contains(baseline) {
          wanted.insert(baseline)
          changed = true
        }
      }
    }
    return benchmarks.filter { wanted.contains($0.id) }
  }

  /// Measures `benchmark`. With a `baseline`, each of its samples is followed by one of the
  /// baseline, and the ratio is taken against those: both sides see the same conditions (a
  /// machine whose disk or scheduler is slower for a minute slows both), instead of a
  /// baseline measured minutes earlier.
  func measure(
    _ benchmark: Benchmark, pairedWith baseline: Benchmark? = nil
  ) async throws -> (BenchResult, UInt64) {
    var values: [Double] = []
    var baselineValues: [Double] = []
    var checksum: UInt64 = 0
    for round in 0..<(warmups + samples) {
      let (sample, sum) = try await measureSample(benchmark)
      checksum &+= sum
      if round >= warmups { values.append(sample) }
      if let baseline {
        let (baselineSample, baselineSum) = try await measureSample(baseline)
        checksum &+= baselineSum
        if round >= warmups { baselineValues.append(baselineSample) }
      }
    }
    var result = BenchResult(
      id: benchmark.id, median: Self.median(values), p90: Self.percentile90(values),
      baseline: benchmark.baseline, note: benchmark.note)
    if !baselineValues.isEmpty { result.pairedBaselineMedian = Self.median(baselineValues) }
    return (result, checksum)
  }

  /// One sample: nanoseconds per operation (or the scenario's own figure), and a checksum.
  func measureSample(_ benchmark: Benchmark) async throws -> (Double, UInt64) {
    switch benchmark.measure {
    case .perOperation(let operations, let body):
      let n = options.quick ? max(1, operations / 10) : operations
      let clock = ContinuousClock()
      var sum: UInt64 = 0
      let elapsed = try await clock.measure { sum = try await body(n) }
      return (Double(elapsed.nanoseconds) / Double(n), sum)
    case .perOperationAfterSetup(let operations, let body):
      let n = options.quick ? max(1, operations / 10) : operations
      let stopwatch = Stopwatch()
      let sum = try await body(n, stopwatch)
      guard let started = stopwatch.started, let end = stopwatch.stopped else {
        fatalError("a scenario measured after its setup did not call start() and stop()")
      }
      return (Double((end - started).nanoseconds) / Double(n), sum)
    case .custom(let body):
      return try await body()
    }
  }

  static func median(_ values: [Double]) -> Double {
    values.sorted()[values.count / 2]
  }

  static func percentile90(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.9).rounded(.up)) - 1)]
  }

  func printRow(_ result: BenchResult, results: [String: BenchResult]) {
    var ratio = ""
    if let base = result.pairedBaselineMedian
      ?? result.baseline.flatMap({ results[$0]?.median }), base > 0
    {
      ratio = String(format: "%.2f", result.median / base)
    }
    if options.tsv {
      print(
        [
          result.id, format(result.median), format(result.p90), result.baseline ?? "", ratio,
        ].joined(separator: "\t"))
    } else {
      print(
        pad(result.id, 36) + pad(format(result.median), 14, right: true)
          + pad(format(result.p90), 14, right: true) + "  " + pad(result.baseline ?? "-", 26)
          + pad(ratio.isEmpty ? "-" : ratio + "x", 9, right: true)
          + (result.note.isEmpty ? "" : "  " + result.note))
    }
  }

  func format(_ value: Double) -> String {
    value >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value)
  }

  func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    guard text.count < width else { return text + " " }
    let fill = String(repeating: " ", count: width - text.count)
    return right ? fill + text : text + fill
  }
}

extension Duration {
  var nanoseconds: Int64 {
    let (seconds, attoseconds) = components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }
}
