// A Combine MVVM view model and its XCTests, written as a Combine user writes them; the only
// change from the Combine original is `import Streams` in place of `import Combine`.
import Foundation
import Streams
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

@MainActor final class ArticlesViewModelTests: XCTestCase {
  private var service: MockArticleService!
  private var viewModel: ArticlesViewModel!
  private var cancellables = Set<AnyCancellable>()
  private var loadingWhenWarned: [Bool] = []

  override func setUp() async throws {
    service = MockArticleService()
    viewModel = ArticlesViewModel(service: service)
  }

  override func tearDown() async throws {
    cancellables.removeAll()
  }

  func testLoadingShowsTheArticles() {
    let loaded = expectation(description: "articles loaded")
    viewModel.$articles
      .dropFirst()
      .sink { articles in
        XCTAssertEqual(articles.map(\.title), ["Swift 6", "Streams"])
        loaded.fulfill()
      }
      .store(in: &cancellables)

    viewModel.load()
    XCTAssertTrue(viewModel.isLoading)
    XCTAssertEqual(service.fetchCount, 1)

    service.response.send([Article(id: 1, title: "Swift 6"), Article(id: 2, title: "Streams")])
    service.response.send(completion: .finished)

    wait(for: [loaded], timeout: 5)
    XCTAssertEqual(viewModel.articles.count, 2)
    let finished = expectation(description: "loading finished")
    viewModel.$isLoading.first { !$0 }.sink { _ in finished.fulfill() }.store(in: &cancellables)
    wait(for: [finished], timeout: 5)
    XCTAssertNil(viewModel.errorMessage)
  }

  func testAFailureShowsAMessage() {
    let failed = expectation(description: "error shown")
    viewModel.$errorMessage
      .compactMap { $0 }
      .sink { message in
        XCTAssertTrue(message.contains("offline"))
        failed.fulfill()
      }
      .store(in: &cancellables)

    viewModel.load()
    service.response.send(completion: .failure(ServiceError.offline))

    wait(for: [failed], timeout: 5)
    XCTAssertFalse(viewModel.isLoading)
    XCTAssertTrue(viewModel.articles.isEmpty)
  }

  func testSearchFiltersTheArticlesAfterTheDebounce() {
    viewModel.load()
    service.response.send([Article(id: 1, title: "Swift 6"), Article(id: 2, title: "Streams")])

    let filtered = expectation(description: "filtered")
    viewModel.$visibleArticles
      .first { $0.map(\.id) == [2] }
      .sink { _ in filtered.fulfill() }
      .store(in: &cancellables)
    viewModel.searchText = "stream"

    wait(for: [filtered], timeout: 5)
    XCTAssertEqual(viewModel.visibleArticles, [Article(id: 2, title: "Streams")])
  }

  func testObjectWillChangeFiresBeforeTheViewModelChanges() {
    viewModel.objectWillChange
      .sink { [weak self] in
        guard let self else { return }
        loadingWhenWarned.append(viewModel.isLoading)
      }
      .store(in: &cancellables)

    viewModel.load()

    XCTAssertEqual(loadingWhenWarned.first, false, "sent while isLoading held the old value")
    XCTAssertTrue(viewModel.isLoading)
  }

  func testCancellingStopsLoading() {
    viewModel.load()
    viewModel.cancel()

    XCTAssertFalse(viewModel.isLoading)
    service.response.send([Article(id: 1, title: "late")])
    XCTAssertTrue(viewModel.articles.isEmpty)
  }

  func testAServiceAnsweringOnABackgroundQueueReachesTheMainActor() {
    let service = JSONArticleService(json: #"[{"id": 7, "title": "Decoded"}]"#)
    let viewModel = ArticlesViewModel(service: service)
    let loaded = expectation(description: "decoded articles")
    viewModel.$articles
      .first { !$0.isEmpty }
      .sink { _ in loaded.fulfill() }
      .store(in: &cancellables)

    viewModel.load()

    wait(for: [loaded], timeout: 5)
    XCTAssertEqual(viewModel.articles, [Article(id: 7, title: "Decoded")])
  }
}

/// `RunLoop.main` as a scheduler, driven by XCTest's `wait(for:timeout:)`, which runs the main
/// run loop.
@MainActor final class RunLoopSchedulerTests: XCTestCase {
  func testActionsRunOnTheRunLoopInOrder() {
    let subject = PassthroughSubject<Int, Never>()
    let done = expectation(description: "three values")
    var received: [Int] = []
    let cancellable = subject.receive(on: RunLoop.main).collect(3).sink { values in
      XCTAssertTrue(Thread.isMainThread)
      received = values
      done.fulfill()
    }
    DispatchQueue(label: "sender").async {
      for value in 1...3 { subject.send(value) }
    }
    wait(for: [done], timeout: 5)
    XCTAssertEqual(received, [1, 2, 3])
    withExtendedLifetime(cancellable) {}
  }

  func testARepeatingActionStopsWhenCancelled() {
    let ticked = expectation(description: "three ticks")
    ticked.expectedFulfillmentCount = 3
    let scheduler = RunLoop.main.scheduler
    let repeating = scheduler.schedule(after: scheduler.now, interval: 0.005) {
      ticked.fulfill()
    }
    wait(for: [ticked], timeout: 5)
    repeating.cancel()
    let quiet = expectation(description: "no tick after cancel")
    quiet.isInverted = true
    _ = scheduler.schedule(after: scheduler.now, interval: 0.005) {}
    wait(for: [quiet], timeout: 0.05)
  }
}
