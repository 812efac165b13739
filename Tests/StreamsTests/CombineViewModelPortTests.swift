// A Combine MVVM view model and its XCTests, written as a Combine user writes them; the only
// change from the Combine original is `import Streams` in place of `import Combine`.
import Foundation
import Streams
import Synchronization
import XCTest

// MARK: - The app's code

struct Article: Decodable, Equatable, Sendable {
  let id: Int
  let title: String
}

enum ServiceError: Error, Equatable {
  case offline
}

protocol ArticleService {
  func fetchArticles() -> AnyPublisher<[Article], any Error>
}

@MainActor final class ArticlesViewModel: ObservableObject {
  @Published private(set) var articles: [Article] = []
  @Published private(set) var visibleArticles: [Article] = []
  @Published private(set) var isLoading = false
  @Published private(set) var errorMessage: String?
  @Published var searchText = ""

  private let service: ArticleService
  private var cancellables = Set<AnyCancellable>()

  init(service: ArticleService) {
    self.service = service
    $searchText
      .debounce(for: .milliseconds(50), scheduler: RunLoop.main)
      .removeDuplicates()
      .combineLatest($articles)
      .map { query, articles in
        query.isEmpty ? articles : articles.filter { $0.title.lowercased().contains(query) }
      }
      .assign(to: &$visibleArticles)
  }

  func load() {
    isLoading = true
    errorMessage = nil
    service.fetchArticles()
      .receive(on: DispatchQueue.main)
      .handleEvents(receiveCancel: { [weak self] in self?.isLoading = false })
      .sink(
        receiveCompletion: { [weak self] completion in
          self?.isLoading = false
          if case .failure(let error) = completion {
            self?.errorMessage = "Could not load articles: \(error)"
          }
        },
        receiveValue: { [weak self] articles in
          self?.articles = articles
        }
      )
      .store(in: &cancellables)
  }

  func cancel() {
    cancellables.removeAll()
  }
}

// MARK: - The tests

/// The mock a Combine test suite keeps: a subject the test drives, and a call count.
final class MockArticleService: ArticleService {
  let response = PassthroughSubject<[Article], any Error>()
  private(set) var fetchCount = 0

  func fetchArticles() -> AnyPublisher<[Article], any Error> {
    fetchCount += 1
    return response.eraseToAnyPublisher()
  }
}

/// A service answering from JSON on a background queue, as a URLSession-backed one does.
final class JSONArticleService: ArticleService {
  let json: Data

  init(json: String) { self.json = Data(json.utf8) }

  func fetchArticles() -> AnyPublisher<[Article], any Error> {
    Just(json)
      .receive(on: DispatchQueue(label: "network"))
      .decode(type: [Article].self, decoder: JSONDecoder())
      .eraseToAnyPublisher()
  }
}

// corelibs XCTest on Linux runs each test method on the main thread, but its test discovery
// cannot call a `@MainActor` test method (it casts every method to a nonisolated one and
// traps), so the class is not `@MainActor` and each test enters the main actor it already runs
// on. On Apple platforms the class would be `@MainActor` and the wrapper would go.
final class ArticlesViewModelTests: XCTestCase {
  func testLoadingShowsTheArticles() {
    MainActor.assumeIsolated {
      let service = MockArticleService()
      let viewModel = ArticlesViewModel(service: service)
      var cancellables = Set<AnyCancellable>()
      let loaded = XCTestExpectation(description: "articles loaded")
      viewModel.$articles
        .dropFirst()
        .sink { articles in
          XCTAssertEqual(articles.map(\.title), ["Swift 6", "Streams"])
          loaded.fulfill()
        }
        .store(in: &cancellables)
      let finished = XCTestExpectation(description: "loading finished")
      viewModel.$isLoading.dropFirst().filter { !$0 }
        .sink { _ in finished.fulfill() }
        .store(in: &cancellables)

      viewModel.load()
      XCTAssertTrue(viewModel.isLoading)
      XCTAssertEqual(service.fetchCount, 1)

      service.response.send([Article(id: 1, title: "Swift 6"), Article(id: 2, title: "Streams")])
      service.response.send(completion: .finished)

      XCTAssertEqual(XCTWaiter.wait(for: [loaded, finished], timeout: 5), .completed)
      XCTAssertEqual(viewModel.articles.count, 2)
      XCTAssertFalse(viewModel.isLoading)
      XCTAssertNil(viewModel.errorMessage)
    }
  }

  func testAFailureShowsAMessage() {
    MainActor.assumeIsolated {
      let service = MockArticleService()
      let viewModel = ArticlesViewModel(service: service)
      var cancellables = Set<AnyCancellable>()
      let failed = XCTestExpectation(description: "error shown")
      viewModel.$errorMessage
        .compactMap { $0 }
        .sink { message in
          XCTAssertTrue(message.contains("offline"))
          failed.fulfill()
        }
        .store(in: &cancellables)

      viewModel.load()
      service.response.send(completion: .failure(ServiceError.offline))

      XCTAssertEqual(XCTWaiter.wait(for: [failed], timeout: 5), .completed)
      XCTAssertFalse(viewModel.isLoading)
      XCTAssertTrue(viewModel.articles.isEmpty)
    }
  }

  func testSearchFiltersTheArticlesAfterTheDebounce() {
    MainActor.assumeIsolated {
      let service = MockArticleService()
      let viewModel = ArticlesViewModel(service: service)
      var cancellables = Set<AnyCancellable>()
      viewModel.load()
      service.response.send([Article(id: 1, title: "Swift 6"), Article(id: 2, title: "Streams")])

      let filtered = XCTestExpectation(description: "filtered")
      viewModel.$visibleArticles
        .first { $0.map(\.id) == [2] }
        .sink { _ in filtered.fulfill() }
        .store(in: &cancellables)
      viewModel.searchText = "stream"

      XCTAssertEqual(XCTWaiter.wait(for: [filtered], timeout: 5), .completed)
      XCTAssertEqual(viewModel.visibleArticles, [Article(id: 2, title: "Streams")])
    }
  }

  func testObjectWillChangeFiresBeforeTheViewModelChanges() {
    MainActor.assumeIsolated {
      let viewModel = ArticlesViewModel(service: MockArticleService())
      var cancellables = Set<AnyCancellable>()
      var loadingWhenWarned: [Bool] = []
      viewModel.objectWillChange
        .sink { loadingWhenWarned.append(viewModel.isLoading) }
        .store(in: &cancellables)

      viewModel.load()

      XCTAssertEqual(loadingWhenWarned.first, false, "sent while isLoading held the old value")
      XCTAssertTrue(viewModel.isLoading)
    }
  }

  func testCancellingStopsLoading() {
    MainActor.assumeIsolated {
      let service = MockArticleService()
      let viewModel = ArticlesViewModel(service: service)
      viewModel.load()
      viewModel.cancel()

      XCTAssertFalse(viewModel.isLoading)
      service.response.send([Article(id: 1, title: "late")])
      XCTAssertTrue(viewModel.articles.isEmpty)
    }
  }

  func testAServiceAnsweringOnABackgroundQueueReachesTheMainActor() {
    MainActor.assumeIsolated {
      let service = JSONArticleService(json: #"[{"id": 7, "title": "Decoded"}]"#)
      let viewModel = ArticlesViewModel(service: service)
      var cancellables = Set<AnyCancellable>()
      let loaded = XCTestExpectation(description: "decoded articles")
      viewModel.$articles
        .first { !$0.isEmpty }
        .sink { _ in loaded.fulfill() }
        .store(in: &cancellables)

      viewModel.load()

      XCTAssertEqual(XCTWaiter.wait(for: [loaded], timeout: 5), .completed)
      XCTAssertEqual(viewModel.articles, [Article(id: 7, title: "Decoded")])
    }
  }
}

/// `RunLoop.main` as a scheduler, driven by XCTest's `wait(for:timeout:)`, which runs the main
/// run loop.
final class RunLoopSchedulerTests: XCTestCase {
  func testActionsRunOnTheRunLoopInOrder() {
    let subject = PassthroughSubject<Int, Never>()
    let done = expectation(description: "three values")
    let received = Mutex<[Int]>([])
    let cancellable = subject.receive(on: RunLoop.main).collect(3).sink { values in
      XCTAssertTrue(Thread.isMainThread)
      received.withLock { $0 = values }
      done.fulfill()
    }
    DispatchQueue(label: "sender").async {
      for value in 1...3 { subject.send(value) }
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(received.withLock { $0 }, [1, 2, 3])
    withExtendedLifetime(cancellable) {}
  }

  func testARepeatingActionStopsWhenCancelled() {
    let ticked = expectation(description: "three ticks")
    ticked.expectedFulfillmentCount = 3
    ticked.assertForOverFulfill = false
    let ticks = Mutex(0)
    let scheduler = RunLoop.main.scheduler
    let repeating = scheduler.schedule(after: scheduler.now, interval: 0.005) {
      ticks.withLock { $0 += 1 }
      ticked.fulfill()
    }
    wait(for: [ticked], timeout: 5)
    repeating.cancel()
    let afterCancel = ticks.withLock { $0 }
    let later = expectation(description: "a later one-off action")
    scheduler.schedule(after: scheduler.now.advanced(by: 0.05)) { later.fulfill() }
    wait(for: [later], timeout: 5)
    XCTAssertEqual(ticks.withLock { $0 }, afterCancel)
  }
}
