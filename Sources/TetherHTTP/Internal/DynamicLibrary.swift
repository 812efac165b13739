#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A shared library opened with `dlopen`, or the process's own symbols, and the C functions
/// looked up in it with `dlsym`.
///
/// The one place that loads code at run time: epoll (``Poller``), `eventfd` (``Waker``) and
/// `pthread_setname_np` (``KernelThreadName``), which the toolchain's Glibc module does not
/// export, and OpenSSL (``OpenSSLLibrary``), so that building Tether needs no header, package
/// or link flag.
/// Libraries are never closed: a function taken from one lives as long as the process.
struct DynamicLibrary: @unchecked Sendable {
  // @unchecked Sendable: an immutable opaque handle; `dlsym` may be called from any thread.
  private let handle: UnsafeMutableRawPointer

  /// The symbols already loaded in the process (the executable and the libraries it links);
  /// `nil` where `dlopen` cannot give them.
  static let process: DynamicLibrary? = dlopen(nil, RTLD_NOW).map(DynamicLibrary.init(handle:))

  private init(handle: UnsafeMutableRawPointer) { self.handle = handle }

  /// Opens the library file `name` (such as `libssl.so.3`), or throws `dlerror`'s reason.
  init(opening name: String) throws(DynamicLibraryFailure) {
    guard let handle = dlopen(name, RTLD_NOW) else {
      let reason = dlerror().map { String(cString: $0) } ?? "\(name) cannot be opened"
      throw DynamicLibraryFailure(description: reason)
    }
    self.handle = handle
  }

  /// The C function `name` as a `Function` (a `@convention(c)` type), or `nil` if the library
  /// has no such symbol.
  func function<Function>(_ name: String, as _: Function.Type = Function.self) -> Function? {
    guard let address = dlsym(handle, name) else { return nil }
    return unsafeBitCast(address, to: Function.self)
  }
}

/// Why a library could not be opened, in `dlerror`'s words.
struct DynamicLibraryFailure: Error, CustomStringConvertible {
  let description: String
}
