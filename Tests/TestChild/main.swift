import Foundation

// The second real process that cross-process tests launch:
// `tether-test-child COMMAND [ARGS...]`. Each area registers its commands in its own file.
let commands = supportCommands.merging(fileCommands) { first, _ in first }
  .merging(updateCommands) { first, _ in first }
  .merging(isolationCommands) { first, _ in first }
  .merging(appStorageCommands) { first, _ in first }
let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let command = commands[name] else {
  FileHandle.standardError.write(
    Data("usage: tether-test-child COMMAND; commands: \(commands.keys.sorted())\n".utf8))
  exit(2)
}
do {
  try await command(Array(arguments.dropFirst()))
  exit(0)
} catch {
  FileHandle.standardError.write(Data("tether-test-child: \(error)\n".utf8))
  exit(1)
}
