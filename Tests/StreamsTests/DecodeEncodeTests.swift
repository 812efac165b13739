import Foundation
import Streams
import Testing

private struct Todo: Codable, Equatable, Sendable {
  let id: Int
  let title: String
}

@Suite struct DecodeEncodeTests {
  @Test func decodeKeepsThePublisherContract() {
    checkContract {
      let upstream = PassthroughSubject<Data, ContractError>()
      return ContractRig(
        publisher: upstream.decode(type: Todo.self, decoder: JSONDecoder()),
        send: { upstream.send(Data(#"{"id":\#($0),"title":"t"}"#.utf8)) },
        finish: { upstream.send(completion: .finished) },
        fail: { upstream.send(completion: .failure(.boom)) })
    }
  }

  @Test func encodeKeepsThePublisherContract() {
    checkOperatorContract { $0.map { Todo(id: $0, title: "t") }.encode(encoder: JSONEncoder()) }
  }

  @Test func decodesEachElement() throws {
    let recorder = RecordingSubscriber<Todo, any Error>()
    let json = [#"{"id":1,"title":"milk"}"#, #"{"id":2,"title":"eggs"}"#]
    json.map { Data($0.utf8) }.publisher
      .decode(type: Todo.self, decoder: JSONDecoder())
      .subscribe(recorder)
    #expect(recorder.values == [Todo(id: 1, title: "milk"), Todo(id: 2, title: "eggs")])
    #expect(recorder.completions.count == 1)
  }

  @Test func aDecodingErrorFailsTheStreamAndCancelsUpstream() {
    let upstream = PassthroughSubject<Data, Never>()
    let recorder = RecordingSubscriber<Todo, any Error>()
    upstream.decode(type: Todo.self, decoder: JSONDecoder()).subscribe(recorder)
    upstream.send(Data("not json".utf8))
    guard case .failure(let error) = recorder.completions.first else {
      Issue.record("expected a failure, got \(recorder.events.count) events")
      return
    }
    #expect(error is DecodingError)
    #expect(upstream.subscriberCount == 0)
  }

  @Test func encodeThenDecodeRoundTrips() {
    let todos = [Todo(id: 1, title: "milk"), Todo(id: 2, title: "eggs")]
    let recorder = RecordingSubscriber<Todo, any Error>()
    todos.publisher
      .encode(encoder: PropertyListEncoder())
      .decode(type: Todo.self, decoder: PropertyListDecoder())
      .subscribe(recorder)
    #expect(recorder.values == todos)
  }
}
