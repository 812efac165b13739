/// Commands the file-storage tests run in a second process.
let fileCommands: [String: ChildCommand] = [:]
