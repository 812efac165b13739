import Dispatch
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs data tasks through a `URLSessionDataDelegate`, so a body is received chunk by chunk
/// and a transfer stops as soon as it passes the size limit, and turns every way a transfer
/// can end into a ``RemoteConfigError``.
final class HTTPTransfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  // Sendable: all mutable state is in `transfers`, a Mutex.

  struct Response {
    let status: Int
    let headers: [String: String]
    let body: Data
  }

  private struct Pending {
    let continuation: CheckedContinuation<Response, any Error>
    let limit: Int
    var response: HTTPURLResponse?
    var body = Data()
  }

  private let transfers = Mutex<[Int: Pending]>([:])

  func perform(
    _ request: URLRequest, on session: URLSession, limit: Int, timeout: TimeInterval
  ) async throws -> Response {
    let taskBox = Mutex<URLSessionDataTask?>(nil)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let task = session.dataTask(with: request)
        let id = task.taskIdentifier
        transfers.withLock { $0[id] = Pending(continuation: continuation, limit: limit) }
        taskBox.withLock { $0 = task }
        // Our own deadline: URLSession's timeout is an idle timeout and a slow trickle of
        // bytes would reset it.
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self, weak task] in
          self?.finish(id, .failure(RemoteConfigError.timedOut(after: timeout)))
          task?.cancel()
        }
        task.resume()
      }
    } onCancel: {
      let task = taskBox.withLock { $0 }
      if let task {
        finish(task.taskIdentifier, .failure(CancellationError()))
        task.cancel()
      }
    }
  }

  private func finish(_ id: Int, _ result: Result<Response, any Error>) {
    guard let pending = transfers.withLock({ $0.removeValue(forKey: id) }) else { return }
    pending.continuation.resume(with: result)
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    let limit = transfers.withLock { transfers -> Int? in
      transfers[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse
      return transfers[dataTask.taskIdentifier]?.limit
    }
    if let limit, response.expectedContentLength > Int64(limit) {
      finish(dataTask.taskIdentifier, .failure(RemoteConfigError.responseTooLarge(limit: limit)))
      completionHandler(.cancel)
      return
    }
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let overLimit = transfers.withLock { transfers -> Pending? in
      let id = dataTask.taskIdentifier
      transfers[id]?.body.append(data)
      guard let pending = transfers[id], pending.body.count > pending.limit else { return nil }
      return transfers.removeValue(forKey: id)
    }
    if let overLimit {
      dataTask.cancel()
      overLimit.continuation.resume(
        throwing: RemoteConfigError.responseTooLarge(limit: overLimit.limit))
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    guard let pending = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else {
      return
    }
    let received = pending.body.count
    let expected = pending.response.flatMap {
      $0.expectedContentLength >= 0 ? Int($0.expectedContentLength) : nil
    }
    if let error {
      let code = (error as? URLError)?.code
      if code == .timedOut {
        pending.continuation.resume(
          throwing: RemoteConfigError.timedOut(after: task.originalRequest?.timeoutInterval ?? 0))
      } else if pending.response != nil, code != .cannotConnectToHost {
        // The headers arrived, then the connection broke: the body is cut off.
        pending.continuation.resume(
          throwing: RemoteConfigError.truncatedBody(expected: expected, received: received))
      } else {
        pending.continuation.resume(
          throwing: RemoteConfigError.connectionFailed(error.localizedDescription))
      }
      return
    }
    guard let response = pending.response else {
      pending.continuation.resume(throwing: RemoteConfigError.connectionFailed("no response"))
      return
    }
    if let expected, received < expected {
      pending.continuation.resume(
        throwing: RemoteConfigError.truncatedBody(expected: expected, received: received))
      return
    }
    var headers: [String: String] = [:]
    for (name, value) in response.allHeaderFields {
      if let name = name as? String, let value = value as? String {
        headers[name.lowercased()] = value
      }
    }
    pending.continuation.resume(
      returning: Response(status: response.statusCode, headers: headers, body: pending.body))
  }
}
