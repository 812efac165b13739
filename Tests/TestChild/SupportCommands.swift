/// A child command: receives its arguments, runs, and exits 0 unless it throws.
typealias ChildCommand = @Sendable ([String]) async throws -> Void

/// Commands that exercise the process helper itself.
let supportCommands: [String: ChildCommand] = [
  "echo": { arguments in print(arguments.joined(separator: " ")) }
]
