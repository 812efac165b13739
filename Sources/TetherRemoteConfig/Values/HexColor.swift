/// An sRGB color written as `"#RGB"`, `"#RRGGBB"` or `"#RRGGBBAA"` (any case).
///
/// ```swift
/// extension ConfigKeys {
///   static let accent = ConfigKey<HexColor>("accent_color", default: HexColor(red: 0, green: 122, blue: 255))
/// }
/// ```
public struct HexColor: Sendable, Hashable, ConfigValueRepresentable, CustomStringConvertible {
  /// The red component, 0–255.
  public var red: UInt8
  /// The green component, 0–255.
  public var green: UInt8
  /// The blue component, 0–255.
  public var blue: UInt8
  /// The alpha component, 0–255 (255 is opaque).
  public var alpha: UInt8

  /// Creates a color from its components.
  public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
    self.red = red
    self.green = green
    self.blue = blue
    self.alpha = alpha
  }

  /// Parses `"#RGB"` (each digit doubled), `"#RRGGBB"` (opaque) or `"#RRGGBBAA"`; `nil` for
  /// anything else.
  public init?(_ text: String) {
    guard text.first == "#" else { return nil }
    var digits: [UInt8] = []
    for character in text.dropFirst() {
      guard let digit = character.hexDigitValue else { return nil }
      digits.append(UInt8(digit))
    }
    switch digits.count {
    case 3:
      self.init(red: digits[0] * 17, green: digits[1] * 17, blue: digits[2] * 17)
    case 6, 8:
      func byte(_ index: Int) -> UInt8 { digits[index] << 4 | digits[index + 1] }
      self.init(
        red: byte(0), green: byte(2), blue: byte(4), alpha: digits.count == 8 ? byte(6) : 255)
    default:
      return nil
    }
  }

  /// Reads a `"#RGB"`, `"#RRGGBB"` or `"#RRGGBBAA"` string.
  public init(configValue: ConfigValue) throws {
    guard let text = configValue.text, let color = HexColor(text) else {
      throw ConfigDecodingError(
        HexColor.self, value: configValue, reason: "expected #RGB, #RRGGBB or #RRGGBBAA")
    }
    self = color
  }

  /// The color as `"#RRGGBB"` when opaque, `"#RRGGBBAA"` otherwise.
  public var description: String {
    func hex(_ byte: UInt8) -> String {
      let digits = Array("0123456789ABCDEF")
      return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
    return "#" + hex(red) + hex(green) + hex(blue) + (alpha == 255 ? "" : hex(alpha))
  }

  /// The color as a hex string.
  public var configJSON: JSONValue? { .string(description) }
}
