import Foundation
import TetherEtcd
import TetherHTTP

/// The in-memory cluster as the stand-in cluster's `HTTPClient` reaches it: each request's
/// body and gateway path, answered by the store.
extension EtcdMemoryStore: HTTPExchangeHandler {
  func respond(to request: HTTPRequest) async throws(HTTPError) -> HTTPResponseMessage {
    let object: EtcdWire.Object
    do throws(EtcdError) {
      object = try EtcdWire.object(request.body ?? Data("{}".utf8))
    } catch {
      return Self.failure(400, code: 3, "the request body is not a JSON object")
    }
    // The gateway's path, whatever prefix the endpoint URL has.
    let path = request.url.path
    let gatewayPath = path.range(of: "/v3/").map { String(path[$0.lowerBound...]) } ?? path
    if let fault = faultyAnswer(gatewayPath, object) { return fault }
    return answer(gatewayPath, object)
  }

  func stream(_ request: HTTPRequest) async throws(HTTPError) -> HTTPStreamingResponse {
    guard request.url.path.hasSuffix("/v3/watch") else {
      let answer = try await respond(to: request)
      return HTTPStreamingResponse(
        status: answer.status, headers: answer.headers,
        streaming: AsyncThrowingStream { continuation in
          continuation.yield(answer.body)
          continuation.finish()
        })
    }
    return watch(request.body ?? Data())
  }
}
