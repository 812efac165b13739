import Foundation

// `swift run tour` walks through Tether on its embedded defaults: no network, no setup.
// Each section lives in its own file.
let arguments = TourArguments.parse(Array(CommandLine.arguments.dropFirst()))
print("Tether tour\n===========")
await streamsTour()
await sharingTour()
if arguments.watch {
  // Both watch until interrupted: the shared file, and the server with --config-url.
  async let files: Void = fileTour(arguments)
  async let config: Void = configTour(arguments)
  _ = await (files, config)
} else {
  await fileTour(arguments)
  await configTour(arguments)
}
print("\nDone.")
