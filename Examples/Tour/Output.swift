import Foundation

/// The tour's `print`: Swift's, then a flush, so that `--watch` and `--config-url` show each
/// change as it happens even when the output goes to a pipe or a file (stdio buffers those
/// in blocks). It shadows `Swift.print` inside the tour only.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
  Swift.print(items.map { "\($0)" }.joined(separator: separator), terminator: terminator)
  fflush(nil)
}

/// Prints the code behind the result that follows it, marked so it stands out: `  ┃ code`.
func code(_ lines: String...) {
  for line in lines { print("  ┃ \(line)") }
}
