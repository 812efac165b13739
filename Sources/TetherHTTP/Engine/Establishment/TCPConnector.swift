import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens the TCP connection of a route's first hop (the origin, or the proxy): resolves the
/// host, then tries each address in turn until one connects. This is the connection's one
/// seam with establishment: ``HTTP1Connection`` starts it, arms its own timer over the whole of
/// establishment (connect, tunnel, handshake), and takes over the descriptor it reports.
///
/// ```swift
/// let connector = TCPConnector(loop: loop, route: route)
/// connector.start(deadline: deadline) { result in
///   switch result {
///   case .success(let descriptor): // connected, non-blocking, not registered with the loop
///   case .failure(let error): // .unreachable naming the route's origin
///   }
/// }
/// ```
///
/// `completion` runs on the loop, at most once, and never after ``cancel()``. Confined to its
/// loop: every method is called on the loop's thread.
final class TCPConnector: EventLoopHandler, @unchecked Sendable {
  // @unchecked Sendable: every mutable property is touched only on `loop`'s thread; the one
  // hop from another thread (the resolver's answer) goes through `loop.execute`.
  typealias Completion = (Result<Int32, HTTPError>) -> Void

  let loop: EventLoop
  let route: ConnectionRoute
  private var completion: Completion?
  private var addresses: [SocketAddress] = []
  private var nextAddress = 0
  private var descriptor: Int32 = -1
  private var token: UInt64 = 0
  private var lastFailure = "connection refused"

  init(loop: EventLoop, route: ConnectionRoute) {
    self.loop = loop
    self.route = route
  }

  deinit {
    if descriptor >= 0 { closeDescriptor(descriptor) }
  }

  /// Resolves and connects; `completion` gets the connected descriptor or the reason none
  /// connected. `deadline` (monotonic nanoseconds) is when the caller gives up; the caller's
  /// own timer enforces it and calls ``cancel()``.
  func start(deadline: UInt64, completion: @escaping Completion) {
    self.completion = completion
    Resolver.shared.resolve(route.host, port: route.port) { [weak self, loop] result in
      let connector = self
      if loop.inLoop {
        connector?.resolved(result)
      } else {
        loop.execute { connector?.resolved(result) }
      }
    }
  }

  /// Stops connecting and closes the socket in progress; the completion is not called.
  func cancel() {
    completion = nil
    closeSocket()
  }

  private func resolved(_ result: Result<[SocketAddress], HTTPError>) {
    guard completion != nil else { return }
    switch result {
    case .success(let list):
      addresses = list
      tryNextAddress()
    case .failure:
      finish(
        .failure(
          .unreachable(
            url: route.origin,
            reason: route.host == route.serverName ? "host not found" : "proxy host not found")))
    }
  }

  private func tryNextAddress() {
    while nextAddress < addresses.count {
      let address = addresses[nextAddress]
      nextAddress += 1
      let socketDescriptor = socket(address.family, socketStreamType, 0)
      guard socketDescriptor >= 0 else {
        lastFailure = String(cString: strerror(errno))
        continue
      }
      _ = fcntl(socketDescriptor, F_SETFD, FD_CLOEXEC)
      _ = fcntl(socketDescriptor, F_SETFL, fcntl(socketDescriptor, F_GETFL) | O_NONBLOCK)
      var one: Int32 = 1
      _ = setsockopt(
        socketDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one,
        socklen_t(MemoryLayout<Int32>.size))
      #if canImport(Darwin)
      _ = setsockopt(
        socketDescriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
      #endif
      let result = address.withSockaddr { Foundation.connect(socketDescriptor, $0, $1) }
      if result == 0 {
        finish(.success(socketDescriptor))
        return
      }
      if errno == EINPROGRESS {
        descriptor = socketDescriptor
        token = loop.register(socketDescriptor, self)
        loop.setInterest(socketDescriptor, token: token, read: false, write: true)
        return
      }
      lastFailure = errno == ECONNREFUSED ? "connection refused" : String(cString: strerror(errno))
      closeDescriptor(socketDescriptor)
    }
    finish(.failure(.unreachable(url: route.origin, reason: lastFailure)))
  }

  func handleReadiness(readable: Bool, writable: Bool) {
    guard descriptor >= 0, readable || writable else { return }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
    if error == EINPROGRESS || error == EALREADY { return }
    if error == 0 {
      let connected = descriptor
      loop.deregister(connected, token: token)
      descriptor = -1
      finish(.success(connected))
      return
    }
    lastFailure = error == ECONNREFUSED ? "connection refused" : String(cString: strerror(error))
    closeSocket()
    tryNextAddress()
  }

  private func finish(_ result: Result<Int32, HTTPError>) {
    guard let completion else {
      if case .success(let descriptor) = result { closeDescriptor(descriptor) }
      return
    }
    self.completion = nil
    completion(result)
  }

  private func closeSocket() {
    guard descriptor >= 0 else { return }
    loop.deregister(descriptor, token: token)
    closeDescriptor(descriptor)
    descriptor = -1
  }
}
