// Apple-only declarations that Scripts/check-platforms gives each module when it type-checks
// the Darwin branches on Linux. Each has the shape Apple's SDK gives it; none is ever run.

import Dispatch
import Glibc

// Apple's Foundation includes URLSession; on Linux it is a module of its own.
@_exported import FoundationNetworking

/// Darwin's `pthread_t` is a pointer (on Linux an integer).
@usableFromInline func pthread_self() -> UnsafeMutableRawPointer { fatalError("type-check only") }

/// Darwin's open flag for a descriptor used only to watch for events.
let O_EVTONLY: Int32 = 0x8000

/// Darwin's socket option that turns SIGPIPE into EPIPE.
let SO_NOSIGPIPE: Int32 = 0x1022

extension sockaddr_in {
  /// BSD sockets carry their length.
  var sin_len: UInt8 {
    get { 0 }
    set {}
  }
}

extension sockaddr_in6 {
  /// BSD sockets carry their length.
  var sin6_len: UInt8 {
    get { 0 }
    set {}
  }
}

/// Dispatch's file-system-object source, on Apple platforms only.
protocol DispatchSourceFileSystemObject: DispatchSourceProtocol {
  var handle: Int32 { get }
  var data: DispatchSource.FileSystemEvent { get }
  var mask: DispatchSource.FileSystemEvent { get }
}

extension DispatchSource {
  static func makeFileSystemObjectSource(
    fileDescriptor: Int32, eventMask: FileSystemEvent, queue: DispatchQueue? = nil
  ) -> any DispatchSourceFileSystemObject {
    fatalError("type-check only")
  }
}

extension stat {
  /// Darwin names the modification time `st_mtimespec` (Linux: `st_mtim`).
  var st_mtimespec: timespec { st_mtim }
}

/// Darwin imports the socket type as an `Int32` macro (Glibc: an enum case).
let SOCK_STREAM: Int32 = 1

/// CoreFoundation's type check, which tells a boxed boolean from a number on Apple platforms.
func CFGetTypeID(_ object: AnyObject?) -> UInt { fatalError("type-check only") }
func CFBooleanGetTypeID() -> UInt { fatalError("type-check only") }
