import Foundation

extension RemoteConfig {
  /// The key's value: the active remote value, else the default from `setDefaults`, else the
  /// key's in-code default, else the type's static value.
  ///
  /// A layer whose value cannot be read as `Value` is skipped and the error recorded in
  /// ``decodeErrors``. Each entry is decoded once per activation, not per lookup.
  @inlinable
  public subscript<Value>(key: ConfigKey<Value>) -> Value {
    let decoded = decoded(key)
    return decoded.remote ?? decoded.defaults ?? key.fallback
  }

  /// The active remote value, or `nil` when the active config does not have the key.
  ///
  /// A remote value that cannot be read as `Value` is not returned: the lookup falls back like
  /// `config[key]` and the error is recorded. ``subscript(safeConfig:)`` returns `nil` instead.
  @inlinable
  public subscript<Value>(config key: ConfigKey<Value>) -> Value? {
    let decoded = decoded(key)
    guard decoded.remoteRaw != nil else { return nil }
    return decoded.remote ?? decoded.defaults ?? key.fallback
  }

  /// The default: the value from `setDefaults`, else the key's in-code default.
  ///
  /// Setting it changes the in-memory defaults (`nil` removes the entry); holders of the key
  /// that see the default are updated.
  public subscript<Value>(default key: ConfigKey<Value>) -> Value? {
    get {
      let decoded = decoded(key)
      return decoded.defaults ?? key.defaultValue
    }
    set {
      var json: JSONValue?
      if let newValue {
        json = newValue.configJSON
        if json == nil {
          report([
            ConfigDecodingError(
              Value.self, value: ConfigValue(raw: .null, source: .default),
              reason: "the value has no JSON form and cannot be set as a default", key: key.name)
          ])
          return
        }
      }
      updateDefaults { $0[key.name] = json }
    }
  }

  /// The first valid value among the active remote value, the defaults and the key's in-code
  /// default, or `nil`: never the static value, never a value that failed to decode.
  @inlinable
  public subscript<Value>(safe key: ConfigKey<Value>) -> Value? {
    let decoded = decoded(key)
    return decoded.remote ?? decoded.defaults ?? key.defaultValue
  }

  /// The active remote value, or `nil` when there is none or it cannot be read as `Value`.
  @inlinable
  public subscript<Value>(safeConfig key: ConfigKey<Value>) -> Value? {
    decoded(key).remote
  }

  /// The default from `setDefaults`, else the key's in-code default; `nil` when there is none
  /// or the `setDefaults` value cannot be read as `Value`.
  @inlinable
  public subscript<Value>(safeDefault key: ConfigKey<Value>) -> Value? {
    let decoded = decoded(key)
    if decoded.defaultRaw != nil { return decoded.defaults }
    return key.defaultValue
  }

  /// The raw value for a name with its source: the active remote value, else the default,
  /// else an empty string with source `.static` (as Firebase's `configValue(forKey:)`).
  ///
  /// A flag service's evaluation of the name comes with it whatever the source: a flag it
  /// could not evaluate keeps the default, and its `errorCode` and `errorDetails` are in
  /// ``ConfigValue/evaluation``.
  public func configValue(forKey name: String) -> ConfigValue {
    state.withLock { state in
      let evaluation = state.active.evaluations[name]
      if let raw = state.active.entries[name] {
        return ConfigValue(raw: raw, source: .remote, evaluation: evaluation)
      }
      if let raw = state.defaults[name] {
        return ConfigValue(raw: raw, source: .default, evaluation: evaluation)
      }
      return ConfigValue(raw: .string(""), source: .static, evaluation: evaluation)
    }
  }

  /// The raw value `config[key]` is read from, with its source: `.remote`, `.default` (from
  /// `setDefaults` or the key's in-code default) or `.static`, and the flag service's
  /// evaluation of the key when there is one (also when it failed and the value is a default).
  public func configValue<Value>(for key: ConfigKey<Value>) -> ConfigValue {
    let origin = decoded(key).resolve(key).origin
    guard let evaluation = state.withLock({ $0.active.evaluations[key.name] }) else {
      return origin
    }
    return ConfigValue(raw: origin.raw, source: origin.source, evaluation: evaluation)
  }

  /// The names of the active remote entries.
  public var activeKeys: Set<String> { state.withLock { Set($0.active.entries.keys) } }

  /// The values that could not be read as their key's type in the active config and the
  /// defaults, one per key and type, in no particular order. Cleared for a key when its
  /// value changes. ``decodeErrorPublisher`` reports each as it is found.
  public var decodeErrors: [ConfigDecodingError] {
    state.withLock { $0.decodeErrors.values.flatMap { $0 } }
  }

  // MARK: - Defaults

  /// Replaces the defaults with `defaults`, whose values are JSON-like Foundation values:
  /// `String`, numbers, `Bool`, `Data` (stored as base64), `Date` (ISO 8601), `URL`, arrays,
  /// `[String: Any]`, `NSNull`.
  ///
  /// - Throws: ``RemoteConfigError/malformedJSON(_:)`` naming the first value of another
  ///   type; the defaults are unchanged then.
  public func setDefaults(_ defaults: [String: Any]) throws(RemoteConfigError) {
    var converted: [String: JSONValue] = [:]
    for (name, value) in defaults {
      guard let json = JSONValue(foundationValue: value) else {
        throw .malformedJSON("default '\(name)' has an unsupported type \(type(of: value))")
      }
      converted[name] = json
    }
    updateDefaults { $0 = converted }
  }

  /// Replaces the defaults with the entries of a JSON object file.
  ///
  /// - Throws: ``RemoteConfigError/fileUnreadable(path:reason:)``,
  ///   ``RemoteConfigError/malformedJSON(_:)`` or ``RemoteConfigError/notAnObject(found:)``;
  ///   the defaults are unchanged then.
  public func setDefaults(fromJSON url: URL) throws(RemoteConfigError) {
    let data: Data
    do {
      data = try Data(contentsOf: url)
    } catch {
      throw .fileUnreadable(path: url.path, reason: "\(error)")
    }
    let entries = try ConfigDocument.entries(from: data)
    updateDefaults { $0 = entries }
  }

  /// Replaces the defaults with the entries of a property list file whose root is a
  /// dictionary (as Firebase's `setDefaults(fromPlist:)`).
  ///
  /// - Throws: ``RemoteConfigError/fileUnreadable(path:reason:)`` or
  ///   ``RemoteConfigError/malformedJSON(_:)`` (not a dictionary plist, or a value of an
  ///   unsupported type); the defaults are unchanged then.
  public func setDefaults(fromPlist url: URL) throws(RemoteConfigError) {
    let plist: Any
    do {
      let data = try Data(contentsOf: url)
      plist = try PropertyListSerialization.propertyList(from: data, format: nil)
    } catch {
      throw .fileUnreadable(path: url.path, reason: "\(error)")
    }
    guard let dictionary = plist as? [String: Any] else {
      throw .malformedJSON("the property list's root is not a dictionary")
    }
    try setDefaults(dictionary)
  }

  // MARK: - Internals

  @inlinable
  func decoded<Value>(_ key: ConfigKey<Value>) -> DecodedValue<Value> {
    if let cached = cachedDecodedValue(key.cacheKey) {
      // The dictionary key includes `Value`'s type, so the entry is a `DecodedValue<Value>`.
      return unsafeDowncast(cached, to: DecodedValue<Value>.self)
    }
    return decodeAndCache(key)
  }

  @usableFromInline
  func cachedDecodedValue(_ key: DecodedValueKey) -> AnyDecodedValue? {
    state.withLock { state in
      key.slot < state.decoded.count ? state.decoded[key.slot] : nil
    }
  }

  @usableFromInline
  func decodeAndCache<Value>(_ key: ConfigKey<Value>) -> DecodedValue<Value> {
    let (remoteRaw, defaultRaw, generation) = state.withLock {
      ($0.active.entries[key.name], $0.defaults[key.name], $0.generation)
    }
    // Decoding may run user code (a `Decodable` init), so it runs outside the lock.
    let decoded = DecodedValue<Value>(name: key.name, remoteRaw: remoteRaw, defaultRaw: defaultRaw)
    let newErrors = state.withLock { state -> [ConfigDecodingError] in
      let slot = key.cacheKey.slot
      if state.decoded.count <= slot {
        state.decoded.append(contentsOf: repeatElement(nil, count: slot + 1 - state.decoded.count))
      }
      guard state.generation == generation, state.decoded[slot] == nil else { return [] }
      state.decoded[slot] = decoded
      if !decoded.errors.isEmpty { state.decodeErrors[key.cacheKey] = decoded.errors }
      return decoded.errors
    }
    report(newErrors)
    return decoded
  }

  func report(_ errors: [ConfigDecodingError]) {
    for error in errors { decodeErrorSubject.send(error) }
  }

  /// Drops decoded values of the named entries; bumps the generation so a decode that was
  /// running against the old values is not stored.
  func invalidate(_ names: Set<String>, in state: inout State) {
    guard !names.isEmpty else { return }
    state.generation &+= 1
    for slot in state.decoded.indices
    where state.decoded[slot].map({ names.contains($0.name) }) == true {
      state.decoded[slot] = nil
    }
    state.decodeErrors = state.decodeErrors.filter { !names.contains($0.key.name) }
  }

  private func updateDefaults(_ change: (inout [String: JSONValue]) -> Void) {
    state.withLock { state in
      let old = state.defaults
      change(&state.defaults)
      var changed = Set<String>()
      for (name, value) in state.defaults where old[name] != value { changed.insert(name) }
      for name in old.keys where state.defaults[name] == nil { changed.insert(name) }
      invalidate(changed, in: &state)
      if !changed.isEmpty { enqueue(.changed(changed, activation: false), in: &state) }
    }
    deliver()
  }
}
