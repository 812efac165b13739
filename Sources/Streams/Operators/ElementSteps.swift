/// What a ``Publishers/ElementOperator`` does with each element: the part in which `map`,
/// `filter`, `dropFirst` and the other element operators differ.
///
/// `next(_:)` is called for one element at a time, in order, and may keep state (as
/// `removeDuplicates` does); each subscription starts from its own copy of the step. A step
/// names the publisher whose elements it takes, so that an operator's type (say
/// `Publishers.Filter<Upstream>`) is spelled with its generic parameters only.
public protocol ElementStep {
  /// The publisher whose elements the step takes.
  associatedtype Upstream: Publisher
  /// The element the step publishes.
  associatedtype Output
  /// The failure of the operator: the upstream's, or the one `mapError` converts it into.
  associatedtype Failure: Error
  /// The element to publish for `input`, or `nil` to drop it.
  mutating func next(_ input: Upstream.Output) -> Output?
  /// Called when the upstream subscription arrives, before any element (`measureInterval`
  /// starts its clock here). The default does nothing.
  mutating func start()
  /// The name of the operator the user wrote (`Map`, `Filter`), which the operator's
  /// `description` shows. The default is the step's type name without `ElementStep` and
  /// generic arguments.
  static var operatorName: String { get }
}

extension ElementStep {
  /// Does nothing: most steps need no start.
  @inlinable public mutating func start() {}

  /// The step's type name without its `ElementStep` prefix and generic arguments.
  public static var operatorName: String {
    let name = String(describing: Self.self).prefix { $0 != "<" }
    return String(name.hasPrefix("ElementStep") ? name.dropFirst("ElementStep".count) : name)
  }
}

/// The step of `compactMap`: the non-`nil` results of a closure.
public struct ElementStepCompactMap<Upstream: Publisher, Output>: ElementStep {
  /// The operator fails when its upstream fails.
  public typealias Failure = Upstream.Failure
  @usableFromInline let transform: (Upstream.Output) -> Output?

  @inlinable init(_ transform: @escaping (Upstream.Output) -> Output?) {
    self.transform = transform
  }

  /// The element to publish for `input`, or `nil` to drop it.
  @inlinable public func next(_ input: Upstream.Output) -> Output? { transform(input) }
}

/// The step of `map`: every element, transformed.
public struct ElementStepMap<Upstream: Publisher, Output>: ElementStep {
  /// The operator fails when its upstream fails.
  public typealias Failure = Upstream.Failure
  @usableFromInline let transform: (Upstream.Output) -> Output

  @inlinable init(_ transform: @escaping (Upstream.Output) -> Output) {
    self.transform = transform
  }

  /// The element to publish for `input`, or `nil` to drop it.
  @inlinable public func next(_ input: Upstream.Output) -> Output? { transform(input) }
}

/// The step of `filter`: the elements `isIncluded` accepts, unchanged.
public struct ElementStepFilter<Upstream: Publisher>: ElementStep {
  /// The step publishes its upstream's elements.
  public typealias Output = Upstream.Output
  /// The operator fails when its upstream fails.
  public typealias Failure = Upstream.Failure
  @usableFromInline let isIncluded: (Output) -> Bool

  @inlinable init(_ isIncluded: @escaping (Output) -> Bool) { self.isIncluded = isIncluded }

  /// The element to publish for `input`, or `nil` to drop it.
  @inlinable public func next(_ input: Output) -> Output? { isIncluded(input) ? input : nil }
}

/// The step of `mapError` and `setFailureType`: every element, unchanged, under the failure
/// type `Failure`.
public struct ElementStepPass<Upstream: Publisher, Failure: Error>: ElementStep {
  /// The step publishes its upstream's elements.
  public typealias Output = Upstream.Output

  @inlinable init() {}

  /// The element to publish for `input`, or `nil` to drop it.
  @inlinable public func next(_ input: Output) -> Output? { input }

  /// `SetFailureType` for a `Never`-failing upstream, `MapError` otherwise.
  public static var operatorName: String {
    Upstream.Failure.self == Never.self ? "SetFailureType" : "MapError"
  }
}

/// The step of `removeDuplicates`: the elements that `isDuplicate(previous, element)` does not
/// reject, where `previous` is the last element published.
public struct ElementStepRemoveDuplicates<Upstream: Publisher>: ElementStep {
  /// The step publishes its upstream's elements.
  public typealias Output = Upstream.Output
  /// The operator fails when its upstream fails.
  public typealias Failure = Upstream.Failure
  @usableFromInline let isDuplicate: (Output, Output) -> Bool
  @usableFromInline var previous: Output?

  @inlinable init(_ isDuplicate: @escaping (Output, Output) -> Bool) {
    self.isDuplicate = isDuplicate
  }

  /// The element to publish for `input`, or `nil` to drop it.
  @inlinable public mutating func next(_ input: Output) -> Output? {
    if let previous, isDuplicate(previous, input) { return nil }
    previous = input
    return input
  }
}

/// The step of `dropFirst`: every element after the first `count`.
public struct ElementStepDrop<Upstream: Publisher>: ElementStep {
  /// The step publishes its upstream's elements.
  public typealias Output = Upstream.Output
  /// The operator fails when its upstream fails.
  public typealias Failure = Upstream.Failure
  @usableFromInline var remaining: Int

  @inlinable init(count: Int) { remaining = count }

  /// The element to publish for `input`, or `nil` to drop it.
  @inlinable public mutating func next(_ input: Output) -> Output? {
    guard remaining > 0 else { return input }
    remaining -= 1
    return nil
  }
}

/// The step of `scan`: each element folded into the running result, which it publishes.
public struct ElementStepScan<Upstream: Publisher, Output>: ElementStep {
  /// The operator fails when its upstream fails.
  public typealias Failure = Upstream.Failure
  @usableFromInline let fold: (Output, Upstream.Output) -> Output
  @usableFromInline var result: Output

  @inlinable init(from result: Output, _ fold: @escaping (Output, Upstream.Output) -> Output) {
    self.result = result
    self.fold = fold
  }

  /// The element to publish for `input`, or `nil` to drop it.
  @inlinable public mutating func next(_ input: Upstream.Output) -> Output? {
    result = fold(result, input)
    return result
  }
}
