import Foundation

/// The tour's command-line options.
struct TourArguments {
  /// `--watch`: keep running and print changes another `tour` process makes to the shared file.
  var watch = false
  /// `--config-url URL`: read remote config from this server instead of the embedded file.
  var configURL: URL?

  static func parse(_ arguments: [String]) -> TourArguments {
    var result = TourArguments()
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      switch argument {
      case "--watch": result.watch = true
      case "--config-url":
        guard let text = iterator.next(), let url = URL(string: text) else {
          fail("--config-url needs a URL")
        }
        result.configURL = url
      case "-h", "--help":
        print("usage: tour [--watch] [--config-url URL]")
        exit(0)
      default: fail("unknown argument \(argument)")
      }
    }
    return result
  }

  static func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tour: \(message)\n".utf8))
    exit(2)
  }
}
