import Foundation
import Synchronization
import TetherHTTP

// tether-http-probe: a second process for TetherHTTPTests' measurements (peak memory, threads,
// sockets), so that they are taken in a process that does nothing else.
//
//   tether-http-probe <url> <maximum-response-size>
//
// Prints `baseline <VmRSS bytes>`, then `outcome <the request's result>`, then
// `peak <VmHWM bytes>`.
//
//   tether-http-probe libraries <url>
//
// Sends one GET to <url> through the engine, then prints `outcome <the request's result>` and
// one `mapped <path>` line per shared library in /proc/self/maps, then `end`: what a process
// that links only TetherHTTP has loaded after a real request (no libcurl, no
// FoundationNetworking).
//
//   tether-http-probe sse-streams <url> <count>
//
// Opens <count> concurrent server-sent-event streams to <url> with one `HTTPClient` and waits
// until each has received an event. Prints `before threads <n> fds <n>` (after warming up
// Swift concurrency's pool), `received <streams> threads <peak> fds <n>`, then cancels every
// stream and prints `after threads <n> fds <n>` once the descriptors are back near the start
// (at most 8 above it: room for an engine's epoll and wake-up descriptors; or after 10 s).
// Thread counts are /proc/self/task entries, descriptors /proc/self/fd.

func status(_ field: String) -> Int {
  let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
  for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
    return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
  }
  return 0
}

func entries(_ directory: String) -> Int {
  ((try? FileManager.default.contentsOfDirectory(atPath: directory))?.count) ?? -1
}

/// Prints `line` at once (standard output is a pipe, so fully buffered otherwise).
func report(_ line: String) {
  print(line)
  fflush(nil)
}

/// A count the streams' tasks share.
final class Counter: Sendable {
  let value = Atomic<Int>(0)
}

/// Opens `count` streams, reports threads and descriptors, cancels them.
func serverSentEventStreams(url: URL, count: Int) async {
  // Swift concurrency's pool grows to one thread per core on demand: make it do so now, so
  // the baseline holds it and the growth measured is the client's.
  await withTaskGroup(of: Void.self) { group in
    for _ in 0..<(ProcessInfo.processInfo.activeProcessorCount * 2) {
      group.addTask {
        let start = ContinuousClock.now
        var spin = 0
        while ContinuousClock.now - start < .milliseconds(30) { spin &+= 1 }
        _ = spin
      }
    }
  }
  let client = HTTPClient(baseURL: url, retryPolicy: .none)
  let threadsBefore = entries("/proc/self/task")
  let fdsBefore = entries("/proc/self/fd")
  report("before threads \(threadsBefore) fds \(fdsBefore)")
  let received = Counter()
  var tasks: [Task<Void, Never>] = []
  for _ in 0..<count {
    tasks.append(
      Task {
        var counted = false
        do {
          for try await _ in client.serverSentEvents(for: HTTPRequest(url: url)) where !counted {
            counted = true
            received.value.add(1, ordering: .relaxed)
          }
        } catch {}
      })
  }
  var peakThreads = entries("/proc/self/task")
  let start = ContinuousClock.now
  while received.value.load(ordering: .relaxed) < count, ContinuousClock.now - start < .seconds(30)
  {
    peakThreads = max(peakThreads, entries("/proc/self/task"))
    try? await Task.sleep(for: .milliseconds(10))
  }
  peakThreads = max(peakThreads, entries("/proc/self/task"))
  report(
    "received \(received.value.load(ordering: .relaxed)) threads \(peakThreads) "
      + "fds \(entries("/proc/self/fd"))")
  for task in tasks { task.cancel() }
  for task in tasks { await task.value }
  let cancelled = ContinuousClock.now
  while entries("/proc/self/fd") > fdsBefore + 8, ContinuousClock.now - cancelled < .seconds(10) {
    try? await Task.sleep(for: .milliseconds(10))
  }
  report("after threads \(entries("/proc/self/task")) fds \(entries("/proc/self/fd"))")
  withExtendedLifetime(client) {}
}

/// Sends one GET to `url`, then reports every shared library mapped into this process.
func mappedLibraries(after url: URL) async {
  let client = HTTPClient(baseURL: url, retryPolicy: .none, proxy: .none)
  do {
    let response = try await client.response(for: HTTPRequest(url: url))
    report("outcome status \(response.status) \(response.body.count) bytes")
  } catch {
    report("outcome \(error)")
  }
  // Read to the end: a /proc file has no size, and a one-shot read may stop at a page.
  let handle = FileHandle(forReadingAtPath: "/proc/self/maps")
  let maps = String(decoding: (try? handle?.readToEnd()) ?? Data(), as: UTF8.self)
  var seen = Set<String>()
  for line in maps.split(separator: "\n") {
    guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last,
      path.hasPrefix("/"), path.contains(".so"), seen.insert(String(path)).inserted
    else { continue }
    report("mapped \(path)")
  }
  report("end")
  withExtendedLifetime(client) {}
}

let arguments = CommandLine.arguments
if arguments.count == 3, arguments[1] == "libraries", let url = URL(string: arguments[2]) {
  await mappedLibraries(after: url)
  exit(0)
}
if arguments.count == 4, arguments[1] == "sse-streams", let url = URL(string: arguments[2]),
  let count = Int(arguments[3])
{
  await serverSentEventStreams(url: url, count: count)
  exit(0)
}
guard arguments.count == 3, let url = URL(string: arguments[1]), let limit = Int(arguments[2])
else {
  print("usage: tether-http-probe <url> <maximum-response-size>")
  print("       tether-http-probe sse-streams <url> <count>")
  print("       tether-http-probe libraries <url>")
  exit(2)
}
let client = HTTPClient(baseURL: url, maximumResponseSize: limit, retryPolicy: .none)
print("baseline \(status("VmRSS"))")
do {
  let response = try await client.response(for: HTTPRequest(url: url))
  print("outcome status \(response.status) \(response.body.count) bytes")
} catch {
  switch error {
  case .tooLarge: print("outcome tooLarge")
  case .undecodable: print("outcome undecodable")
  default: print("outcome \(error)")
  }
}
print("peak \(status("VmHWM"))")
