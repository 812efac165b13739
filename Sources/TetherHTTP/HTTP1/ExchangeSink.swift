import Foundation

/// Where one exchange's answer goes, as it arrives. Called on the connection's loop.
protocol ExchangeSink: AnyObject {
  /// The head; an error aborts the exchange.
  func receiveHead(status: Int, headers: [String: String]) -> HTTPError?
  /// A piece of the body.
  func receiveBody(_ piece: Data) -> BodyDecision
}

/// What a sink wants after a piece of body.
enum BodyDecision {
  case proceed
  /// Stop reading the socket until ``HTTP1Connection/resumeReading()`` (backpressure: the
  /// kernel's buffers fill and TCP slows the server down).
  case pause
  case abort(HTTPError)
}
