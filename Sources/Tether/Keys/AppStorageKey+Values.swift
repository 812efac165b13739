import Foundation

// The `.appStorage` spellings swift-sharing users type, one per stored type and its optional.

extension SharedReaderKey {
  /// A `Bool` stored in `UserDefaults` under `key` (see ``AppStorageKey``).
  ///
  /// - Parameters:
  ///   - key: The entry's name.
  ///   - store: The store; `UserDefaults.standard` (or an isolated scope's own) when `nil`.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Bool> {
    AppStorageKey(key, store: store, lookup: .bool)
  }

  /// An optional `Bool` stored in `UserDefaults` under `key`; `nil` removes the entry.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Bool?> {
    AppStorageKey(key, store: store, lookup: .optional(AppStorageLookup<Bool>.bool))
  }

  /// A `Int` stored in `UserDefaults` under `key` (see ``AppStorageKey``).
  ///
  /// - Parameters:
  ///   - key: The entry's name.
  ///   - store: The store; `UserDefaults.standard` (or an isolated scope's own) when `nil`.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Int> {
    AppStorageKey(key, store: store, lookup: .int)
  }

  /// An optional `Int` stored in `UserDefaults` under `key`; `nil` removes the entry.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Int?> {
    AppStorageKey(key, store: store, lookup: .optional(AppStorageLookup<Int>.int))
  }

  /// A `Double` stored in `UserDefaults` under `key` (see ``AppStorageKey``).
  ///
  /// - Parameters:
  ///   - key: The entry's name.
  ///   - store: The store; `UserDefaults.standard` (or an isolated scope's own) when `nil`.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Double> {
    AppStorageKey(key, store: store, lookup: .double)
  }

  /// An optional `Double` stored in `UserDefaults` under `key`; `nil` removes the entry.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Double?> {
    AppStorageKey(key, store: store, lookup: .optional(AppStorageLookup<Double>.double))
  }

  /// A `String` stored in `UserDefaults` under `key` (see ``AppStorageKey``).
  ///
  /// - Parameters:
  ///   - key: The entry's name.
  ///   - store: The store; `UserDefaults.standard` (or an isolated scope's own) when `nil`.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<String> {
    AppStorageKey(key, store: store, lookup: .string)
  }

  /// An optional `String` stored in `UserDefaults` under `key`; `nil` removes the entry.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<String?> {
    AppStorageKey(key, store: store, lookup: .optional(AppStorageLookup<String>.string))
  }

  /// An array of strings stored in `UserDefaults` under `key` as a property-list array (see
  /// ``AppStorageKey``); an entry holding anything but strings is the default.
  ///
  /// - Parameters:
  ///   - key: The entry's name.
  ///   - store: The store; `UserDefaults.standard` (or an isolated scope's own) when `nil`.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<[String]> {
    AppStorageKey(key, store: store, lookup: .strings)
  }

  /// An optional array of strings stored in `UserDefaults` under `key`; `nil` removes the
  /// entry.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<[String]?> {
    AppStorageKey(key, store: store, lookup: .optional(AppStorageLookup<[String]>.strings))
  }

  /// A `URL` stored in `UserDefaults` under `key` (see ``AppStorageKey``).
  ///
  /// - Parameters:
  ///   - key: The entry's name.
  ///   - store: The store; `UserDefaults.standard` (or an isolated scope's own) when `nil`.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<URL> {
    AppStorageKey(key, store: store, lookup: .url)
  }

  /// An optional `URL` stored in `UserDefaults` under `key`; `nil` removes the entry.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<URL?> {
    AppStorageKey(key, store: store, lookup: .optional(AppStorageLookup<URL>.url))
  }

  /// A `Data` stored in `UserDefaults` under `key` (see ``AppStorageKey``).
  ///
  /// - Parameters:
  ///   - key: The entry's name.
  ///   - store: The store; `UserDefaults.standard` (or an isolated scope's own) when `nil`.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Data> {
    AppStorageKey(key, store: store, lookup: .data)
  }

  /// An optional `Data` stored in `UserDefaults` under `key`; `nil` removes the entry.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Data?> {
    AppStorageKey(key, store: store, lookup: .optional(AppStorageLookup<Data>.data))
  }

  /// A `Date` stored in `UserDefaults` under `key` (see ``AppStorageKey``).
  ///
  /// - Parameters:
  ///   - key: The entry's name.
  ///   - store: The store; `UserDefaults.standard` (or an isolated scope's own) when `nil`.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Date> {
    AppStorageKey(key, store: store, lookup: .date)
  }

  /// An optional `Date` stored in `UserDefaults` under `key`; `nil` removes the entry.
  public static func appStorage(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Date?> {
    AppStorageKey(key, store: store, lookup: .optional(AppStorageLookup<Date>.date))
  }

  /// A `RawRepresentable` value with a raw `Int`, stored in `UserDefaults` under `key` as
  /// its raw value (an entry that is no valid raw value is the default).
  public static func appStorage<Value: RawRepresentable & Sendable>(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Value.RawValue == Int, Self == AppStorageKey<Value> {
    AppStorageKey(key, store: store, lookup: .rawInt(Value.self))
  }

  /// An optional `RawRepresentable` value with a raw `Int`; `nil` removes the entry.
  public static func appStorage<Value: RawRepresentable & Sendable>(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Value.RawValue == Int, Self == AppStorageKey<Value?> {
    AppStorageKey(key, store: store, lookup: .optional(AppStorageLookup<Value>.rawInt(Value.self)))
  }

  /// A `RawRepresentable` value with a raw `String`, stored in `UserDefaults` under `key` as
  /// its raw value (an entry that is no valid raw value is the default).
  public static func appStorage<Value: RawRepresentable & Sendable>(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Value.RawValue == String, Self == AppStorageKey<Value> {
    AppStorageKey(key, store: store, lookup: .rawString(Value.self))
  }

  /// An optional `RawRepresentable` value with a raw `String`; `nil` removes the entry.
  public static func appStorage<Value: RawRepresentable & Sendable>(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Value.RawValue == String, Self == AppStorageKey<Value?> {
    AppStorageKey(
      key, store: store, lookup: .optional(AppStorageLookup<Value>.rawString(Value.self)))
  }
}
