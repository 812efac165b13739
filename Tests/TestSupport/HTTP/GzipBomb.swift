import Foundation

/// Builds a gzip stream of zeros by hand (no zlib needed): one fixed-Huffman deflate block
/// holding a literal 0 and then back-references of length 258 at distance 1, 13 bits each.
enum GzipBomb {
  static func data(decompressedByteCount: Int) -> Data {
    var writer = BitWriter()
    writer.write(bits: 1, count: 1)  // BFINAL
    writer.write(bits: 1, count: 2)  // BTYPE = 01, fixed Huffman
    writer.writeHuffman(code: 0x30, length: 8)  // literal 0
    var produced = 1
    while produced + 258 <= decompressedByteCount {
      writer.writeHuffman(code: 0b1100_0101, length: 8)  // length code 285: 258 bytes
      writer.writeHuffman(code: 0, length: 5)  // distance code 0: distance 1
      produced += 258
    }
    while produced < decompressedByteCount {
      writer.writeHuffman(code: 0x30, length: 8)
      produced += 1
    }
    writer.writeHuffman(code: 0, length: 7)  // end of block
    var data = Data([0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0x03])
    data.append(contentsOf: writer.bytes())
    // The CRC-32 of the zeros is not computed: a client stops long before the trailer.
    data.append(contentsOf: [0, 0, 0, 0])
    let size = UInt32(truncatingIfNeeded: decompressedByteCount)
    data.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) })
    return data
  }

  private struct BitWriter {
    var output: [UInt8] = []
    var accumulator: UInt64 = 0
    var count = 0

    /// Appends `count` bits of `bits`, least significant first (deflate's bit order).
    mutating func write(bits: UInt64, count bitCount: Int) {
      accumulator |= bits << UInt64(count)
      count += bitCount
      while count >= 8 {
        output.append(UInt8(truncatingIfNeeded: accumulator))
        accumulator >>= 8
        count -= 8
      }
    }

    /// Appends a Huffman code, most significant bit first.
    mutating func writeHuffman(code: UInt64, length: Int) {
      var reversed: UInt64 = 0
      for bit in 0..<length { reversed |= ((code >> UInt64(bit)) & 1) << UInt64(length - 1 - bit) }
      write(bits: reversed, count: length)
    }

    func bytes() -> [UInt8] {
      count > 0 ? output + [UInt8(truncatingIfNeeded: accumulator)] : output
    }
  }
}
