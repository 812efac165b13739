// Collections of `Identifiable` elements: one shared value per element, for lists.

extension Shared
where
  Value: RangeReplaceableCollection & MutableCollection, Value.Element: Identifiable & Sendable,
  Value.Element.ID: Sendable
{
  /// The element with `id`, as a shared value that reads and writes through the collection.
  ///
  /// ```swift
  /// $todos[id: id].withLock { $0?.isDone = true }
  /// $todos[id: id].withLock { $0 = nil }          // removes the element
  /// if let todo = Shared($todos[id: id]) { … }     // unwrap: Shared<Todo>
  /// ```
  ///
  /// It is `nil` while no element has `id`. Assigning `nil` removes the element; assigning an
  /// element while none has `id` appends it. Every change saves the whole collection.
  public subscript(id id: Value.Element.ID) -> Shared<Value.Element?> {
    Shared<Value.Element?>(
      reference: KeyPathReference(reference, keyPath: \Value.[sharedElementID: id]))
  }
}

extension RangeReplaceableCollection {
  /// One shared value per element of a shared collection, each writing through it.
  ///
  /// ```swift
  /// ForEach(Array($todos)) { $todo in TodoRow(todo: $todo) }
  /// ```
  ///
  /// The array holds the elements present now; each keeps reading and writing its element
  /// by id (see `Shared`'s `subscript(id:)`).
  public init<Collection>(_ shared: Shared<Collection>)
  where
    Element == Shared<Collection.Element>,
    Collection: RangeReplaceableCollection & MutableCollection,
    Collection.Element: Identifiable & Sendable, Collection.Element.ID: Sendable
  {
    self.init(shared.wrappedValue.compactMap { Shared<Collection.Element>(shared[id: $0.id]) })
  }
}

extension RangeReplaceableCollection where Self: MutableCollection, Element: Identifiable {
  /// The element with `id`; setting `nil` removes it, setting an absent one appends it.
  subscript(sharedElementID id: Element.ID) -> Element? {
    get { first { $0.id == id } }
    set {
      guard let index = firstIndex(where: { $0.id == id }) else {
        if let newValue { append(newValue) }
        return
      }
      if let newValue {
        self[index] = newValue
      } else {
        remove(at: index)
      }
    }
  }
}
