import Foundation
import TetherHTTP

// tether-http-probe: a second process for TetherHTTPTests' memory measurements, so that peak
// memory is measured in a process that does nothing else.
//
//   tether-http-probe <url> <maximum-response-size> [sockets|urlsession]
//
// The third argument picks the transport of plain http (default: sockets, the client's own).
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
guard (3...4).contains(arguments.count), let url = URL(string: arguments[1]),
  let limit = Int(arguments[2])
else {
  print("usage: tether-http-probe <url> <maximum-response-size> [sockets|urlsession]")
  exit(2)
}
let client = HTTPClient(
  baseURL: url, maximumResponseSize: limit, retryPolicy: .none,
  plainHTTPOverSockets: arguments.count < 4 || arguments[3] != "urlsession")
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
