import Foundation

// `swift run tour` walks through Tether on its embedded defaults: no network, no setup.
// Each section lives in its own file.
let arguments = TourArguments.parse(Array(CommandLine.arguments.dropFirst()))
print("Tether tour\n===========")
await streamsTour()
await sharingTour()
await fileTour(arguments)
await configTour(arguments)
print("\nDone.")
