/// Equality for errors whose payload holds another error (`any Error`), which is not
/// `Equatable`: two errors are equal when their full debug descriptions are (same type, same
/// case, same payload, underlying errors included). Used by the error types' `Equatable`
/// conformances so `#expect(throws: SomeError.case(...))` works, and stays correct when a
/// case is added (no exhaustive switch to forget).
package func errorsAreEqual(_ lhs: some Error, _ rhs: some Error) -> Bool {
  String(reflecting: lhs) == String(reflecting: rhs)
}
