import Foundation

// libFuzzer harness for the etcd gateway's response decoders: the range answer
// (`EtcdRange`), the transaction answer (`EtcdTxnResult`) and the watch stream
// (`EtcdWatchDecoder`), which take whatever a member, a proxy or a broken connection sends.
// Built by Scripts/run-fuzzers with the files listed in `sources` in the same module.
//
// Properties checked on every input (a violation traps, which libFuzzer reports as a crash):
// - each decoder either decodes or fails with `EtcdError.invalidResponse`, never anything else;
// - the watch decoder gives the same messages however the stream is cut into chunks (the
//   first byte of the input chooses the cut);
// - the watch decoder never holds more than its limit of an unfinished line (a longer line
//   becomes one `oversized` message, wherever the chunks are cut).

/// libFuzzer's entry point: checks the properties above for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  expectInvalidResponseOnly { () throws(EtcdError) in _ = try EtcdRange(decoding: data) }
  expectInvalidResponseOnly { () throws(EtcdError) in _ = try EtcdTxnResult(decoding: data) }

  let limit = 4096
  var whole = EtcdWatchDecoder(limit: limit)
  let all = decodeAll(&whole, [data])
  let cut = count == 0 ? 0 : Int(data[data.startIndex]) % (count + 1)
  var split = EtcdWatchDecoder(limit: limit)
  let pieces = decodeAll(&split, [data.prefix(cut), data.dropFirst(cut)])
  // The same messages when neither was cut short by an over-long line or a failure.
  if case .success(let wholeMessages) = all, case .success(let pieceMessages) = pieces {
    precondition(wholeMessages == pieceMessages, "the chunk boundary changed the messages")
  }
  return 0
}

private func expectInvalidResponseOnly(_ body: () throws(EtcdError) -> Void) {
  do {
    try body()
  } catch {
    guard case .invalidResponse = error else {
      preconditionFailure("unexpected error \(error)")
    }
  }
}

/// Feeds `chunks` in order; the messages, or the first failure.
private func decodeAll(
  _ decoder: inout EtcdWatchDecoder, _ chunks: [Data]
) -> Result<[EtcdWatchMessage], EtcdError> {
  var messages: [EtcdWatchMessage] = []
  for chunk in chunks {
    do {
      messages += try decoder.feed(Data(chunk))
    } catch {
      guard case .invalidResponse = error else {
        preconditionFailure("unexpected error \(error)")
      }
      return .failure(error)
    }
  }
  return .success(messages)
}
