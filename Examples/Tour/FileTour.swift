import Foundation
import Tether

/// What the tour keeps on disk between runs.
struct TourVisits: Codable, Equatable, Sendable {
  var runs = 0
  var lastRunBy = ""
}

/// The tour section on file storage.
///
/// `swift run tour` counts its runs in a JSON file of the user's own (in the temporary
/// directory, named with the user id, so users of one machine never share or block it);
/// `swift run tour --watch` keeps running and prints each change another `tour` makes to it.
func fileTour(_ arguments: TourArguments) async {
  print("\n-- Persisting to files --")
  let url = FileManager.default.temporaryDirectory
    .appending(path: "tether-tour-\(getuid())").appending(path: "visits.json")
  code(
    #"let url = FileManager.default.temporaryDirectory.appending(path: "tether-tour-\(getuid())/visits.json")"#,
    "@Shared(.fileStorage(url)) var visits = TourVisits()")
  @Shared(.fileStorage(url)) var visits = TourVisits()
  print("  url is \(url.path)")
  if let error = $visits.loadError { print("  the file could not be read: \(error)") }

  if arguments.watch {
    await watch($visits, at: url)
    return
  }

  code("$visits.withLock { $0.runs += 1; $0.lastRunBy = \"tour (pid …)\" }")
  $visits.withLock {
    $0.runs += 1
    $0.lastRunBy = "tour (pid \(getpid()))"
  }
  print("  runs so far, including this one: \(visits.runs)")
  do {
    // withLock wrote the first change at once, off this thread; save() waits for the disk.
    code("try await $visits.save()   // writes at once, returns when the file is on disk")
    try await $visits.save()
    let contents = (try? String(contentsOf: url, encoding: .utf8)) ?? "?"
    print("  on disk: \(contents)")
  } catch {
    print("  could not save: \(error)")
  }
  print("  run `swift run tour --watch` in another terminal, then this tour again, to see")
  print("  one process pick up the other's change through the file.")
}

/// Prints the value, then every change another process makes, until interrupted.
private func watch(_ visits: Shared<TourVisits>, at url: URL) async {
  FileHandle.standardOutput.write(Data("  watching \(url.path); press Ctrl-C to stop.\n".utf8))
  for await value in visits.values {
    // Written unbuffered so each change shows at once, also when the output is a pipe.
    let line =
      value.runs == 0
      ? "  no runs recorded yet (the file is missing or was deleted)\n"
      : "  runs: \(value.runs), last by \(value.lastRunBy)\n"
    FileHandle.standardOutput.write(Data(line.utf8))
  }
}
