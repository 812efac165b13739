import Streams
import Synchronization

/// The tour section on Streams.
func streamsTour() async {
  print("\n-- Streams: Combine's vocabulary on Linux --")

  // A subject, an operator chain and a sink.
  code(
    "let temperature = CurrentValueSubject<Double, Never>(20)",
    "temperature.map { $0 * 9 / 5 + 32 }.removeDuplicates().sink { … }",
    "temperature.value = 21; temperature.value = 21; temperature.send(25)")
  let temperature = CurrentValueSubject<Double, Never>(20)
  let log = Mutex<[String]>([])
  let cancellable =
    temperature
    .map { $0 * 9 / 5 + 32 }
    .removeDuplicates()
    .sink { fahrenheit in log.withLock { $0.append("\(fahrenheit) °F") } }
  temperature.value = 21
  temperature.value = 21  // a duplicate: removed
  temperature.send(25)
  print("sink saw:", log.withLock { $0 }.joined(separator: ", "))
  cancellable.cancel()

  // Demand and the async bridge: every value, in order, until the publisher finishes.
  code(
    "let values = events.values   // an AsyncStream of every value",
    #"events.send("started"); events.send("saved"); events.send("stopped"); events.send(completion: .finished)"#,
    "for await event in values { … }")
  let events = PassthroughSubject<String, Never>()
  let values = events.values
  for event in ["started", "saved", "stopped"] { events.send(event) }
  events.send(completion: .finished)
  var received: [String] = []
  for await event in values { received.append(event) }
  print("for await saw:", received.joined(separator: ", "))

  // Operators compose as in Combine.
  code("(1...10).publisher.filter { $0.isMultiple(of: 2) }.collect().sink { … }")
  let evens = (1...10).publisher.filter { $0.isMultiple(of: 2) }.collect()
  let collected = Mutex<[Int]>([])
  _ = evens.sink { array in collected.withLock { $0 = array } }
  print("collected evens:", collected.withLock { $0 })
}
