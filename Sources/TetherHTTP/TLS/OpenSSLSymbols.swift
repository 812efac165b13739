/// Looks up OpenSSL's C functions in one opened libssl, by name or by any of the names the
/// versions give one function, and says which is missing.
///
/// ```swift
/// let symbols = try OpenSSLSymbols(library: try OpenSSLSymbols.open("libssl.so.3"),
///                                  name: "libssl.so.3")
/// let read: OpenSSLLibrary.ReadFunction = try symbols.function("SSL_read")
/// let peer: OpenSSLLibrary.CreateFunction = try symbols.function(
///   anyOf: ["SSL_get1_peer_certificate", "SSL_get_peer_certificate"])
/// ```
///
/// `dlsym` on libssl's handle searches libssl, then the libraries it depends on (its own
/// libcrypto), so libcrypto's functions are found here too and always match libssl's version.
struct OpenSSLSymbols {
  /// The opened libssl.
  let library: DynamicLibrary
  /// Its file name, for the errors.
  let name: String

  /// Opens the library file `name`, or throws ``TLSFailure/libraryUnavailable(_:)`` with
  /// `dlerror`'s reason.
  static func open(_ name: String) throws(TLSFailure) -> DynamicLibrary {
    do throws(DynamicLibraryFailure) {
      return try DynamicLibrary(opening: name)
    } catch {
      throw TLSFailure.libraryUnavailable(error.description)
    }
  }

  /// The function `symbol` as a `Function`, or ``TLSFailure/libraryUnavailable(_:)`` naming
  /// it.
  func function<Function>(
    _ symbol: String, as type: Function.Type = Function.self
  ) throws(TLSFailure) -> Function {
    try function(anyOf: [symbol], as: type)
  }

  /// The first of `symbols` the library has, as a `Function` (newest spelling first), or
  /// ``TLSFailure/libraryUnavailable(_:)`` naming them all.
  func function<Function>(
    anyOf symbols: [String], as _: Function.Type = Function.self
  ) throws(TLSFailure) -> Function {
    for symbol in symbols {
      if let function = library.function(symbol, as: Function.self) { return function }
    }
    throw TLSFailure.libraryUnavailable(
      "\(symbols.joined(separator: " or ")) is missing from \(name)")
  }
}
