import Foundation

/// Formats and parses HTTP dates (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's IMF-fixdate).
///
/// Used for `Last-Modified`, `If-Modified-Since` and `Retry-After`; whole seconds only.
public enum HTTPDate {
  private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
  private static let months = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]

  private static var calendar: Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(secondsFromGMT: 0)!
    return calendar
  }

  /// The IMF-fixdate text for `date`, truncated to whole seconds.
  public static func string(from date: Date) -> String {
    let parts = calendar.dateComponents(
      [.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
    func two(_ value: Int?) -> String {
      let text = String(value ?? 0)
      return text.count < 2 ? "0" + text : text
    }
    let weekday = weekdays[(parts.weekday ?? 1) - 1]
    let month = months[(parts.month ?? 1) - 1]
    return "\(weekday), \(two(parts.day)) \(month) \(parts.year ?? 1970) "
      + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) GMT"
  }

  /// The date an IMF-fixdate text names, or `nil` when the text is not one.
  public static func date(from text: String) -> Date? {
    let fields = text.split(separator: " ")
    guard fields.count == 6, fields[5] == "GMT",
      let day = Int(fields[1]),
      let month = months.firstIndex(of: String(fields[2])),
      let year = Int(fields[3])
    else { return nil }
    let time = fields[4].split(separator: ":").compactMap { Int($0) }
    guard time.count == 3 else { return nil }
    let components = DateComponents(
      year: year, month: month + 1, day: day, hour: time[0], minute: time[1], second: time[2])
    return calendar.date(from: components)
  }
}
