import Foundation
import TetherHTTP

// tether-http-probe: a second process for TetherHTTPTests' memory measurements, so that peak
// memory is measured in a process that does nothing else.
//
//   tether-http-probe <url> <maximum-response-size>
//
// Prints `baseline <VmRSS bytes>`, then `outcome <the request's result>`, then
// `peak <VmHWM bytes>`.

func status(_ field: String) -> Int {
  let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
  for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
    return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
  }
  return 0
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let url = URL(string: arguments[1]), let limit = Int(arguments[2])
else {
  print("usage: tether-http-probe <url> <maximum-response-size>")
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
  default: print("outcome \(error)")
  }
}
print("peak \(status("VmHWM"))")
