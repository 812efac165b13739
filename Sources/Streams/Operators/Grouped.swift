/// How a fan-in publisher groups the values of its upstreams: ``Publishers/LatestValues``
/// (`combineLatest`) or ``Publishers/ValuesInOrder`` (`zip`).
///
/// Code names the publishers by their Combine names (`Publishers.CombineLatest`,
/// `Publishers.Zip`, ...), which are ``Publishers/Grouped`` configured with a rule.
public protocol GroupingRule {
  /// `true`: each upstream keeps its latest value and every value makes a group of the latest
  /// values. `false`: the n-th values of all upstreams make the n-th group, each value used
  /// once.
  static var takesLatest: Bool { get }
}

extension Publishers {
  /// The rule of `combineLatest`: a group of the upstreams' latest values whenever any of them
  /// produces one, once all have produced one.
  public enum LatestValues: GroupingRule {
    /// `true`: each upstream keeps its latest value.
    @inlinable public static var takesLatest: Bool { true }
  }

  /// The rule of `zip`: the n-th values of all upstreams make the n-th group.
  public enum ValuesInOrder: GroupingRule {
    /// `false`: each value waits for its partners and is used once.
    @inlinable public static var takesLatest: Bool { false }
  }

  /// A publisher that groups the values of two upstreams by `Rule`: the one type behind
  /// ``Publishers/CombineLatest`` and ``Publishers/Zip``.
  public struct Grouped<A: Publisher, B: Publisher, Rule: GroupingRule>: Publisher
  where A.Failure == B.Failure {
    /// The kind of values published: a tuple of one value from each upstream.
    public typealias Output = (A.Output, B.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B

    /// Creates a publisher that groups the values of `a` and `b`.
    public init(_ a: A, _ b: B) {
      self.a = a
      self.b = b
    }

    /// Attaches the subscriber, then subscribes to both upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      subscribeGroups(subscriber, of: a, b, grouping: Grouping(Rule.self))
    }
  }

  /// A publisher that groups the values of three upstreams by `Rule`: the one type behind
  /// ``Publishers/CombineLatest3`` and ``Publishers/Zip3``.
  public struct Grouped3<A: Publisher, B: Publisher, C: Publisher, Rule: GroupingRule>: Publisher
  where A.Failure == B.Failure, B.Failure == C.Failure {
    /// The kind of values published: a tuple of one value from each upstream.
    public typealias Output = (A.Output, B.Output, C.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B
    /// The third upstream publisher.
    public let c: C

    /// Creates a publisher that groups the values of `a`, `b` and `c`.
    public init(_ a: A, _ b: B, _ c: C) {
      (self.a, self.b, self.c) = (a, b, c)
    }

    /// Attaches the subscriber, then subscribes to the three upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      subscribeGroups(subscriber, of: a, b, c, grouping: Grouping(Rule.self))
    }
  }

  /// A publisher that groups the values of four upstreams by `Rule`: the one type behind
  /// ``Publishers/CombineLatest4`` and ``Publishers/Zip4``.
  public struct Grouped4<
    A: Publisher, B: Publisher, C: Publisher, D: Publisher, Rule: GroupingRule
  >:
    Publisher
  where A.Failure == B.Failure, B.Failure == C.Failure, C.Failure == D.Failure {
    /// The kind of values published: a tuple of one value from each upstream.
    public typealias Output = (A.Output, B.Output, C.Output, D.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B
    /// The third upstream publisher.
    public let c: C
    /// The fourth upstream publisher.
    public let d: D

    /// Creates a publisher that groups the values of `a`, `b`, `c` and `d`.
    public init(_ a: A, _ b: B, _ c: C, _ d: D) {
      (self.a, self.b, self.c, self.d) = (a, b, c, d)
    }

    /// Attaches the subscriber, then subscribes to the four upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      subscribeGroups(subscriber, of: a, b, c, d, grouping: Grouping(Rule.self))
    }
  }
}

extension Grouping {
  /// The grouping `Rule` names; a constant once the publisher is specialised.
  @inlinable init<Rule: GroupingRule>(_: Rule.Type) {
    self = Rule.takesLatest ? .latest : .inOrder
  }
}
