import Foundation
import TestSupport
import Testing

/// Sources a user might write, type-checked against the built `Streams` module by the real
/// compiler: what must compile does, and what would race still does not.
@Suite struct SinkIsolationCompileTests {
  @Test(.enabled(if: Compiler.swiftc != nil)) func theMainActorViewModelShapeCompiles()
    async throws
  {
    let errors = try await Compiler.typecheck(
      """
      import Dispatch
      import Streams

      @MainActor final class ViewModel: ObservableObject {
        @Published var items: [String] = []
        @Published var isLoading = false
        private var cancellables = Set<AnyCancellable>()

        func bind(_ publisher: AnyPublisher<[String], any Error>) {
          isLoading = true
          publisher
            .receive(on: DispatchQueue.main)
            .handleEvents(receiveCancel: { [weak self] in self?.isLoading = false })
            .sink(
              receiveCompletion: { [weak self] _ in self?.isLoading = false },
              receiveValue: { [weak self] in self?.items = $0 })
            .store(in: &cancellables)
        }
      }
      """)
    #expect(errors.isEmpty, "\(errors)")
  }

  @Test(.enabled(if: Compiler.swiftc != nil))
  func aNonisolatedClosureCannotCaptureNonSendableState()
    async throws
  {
    let errors = try await Compiler.typecheck(
      """
      import Streams

      final class Tally { var count = 0 }

      func count(_ values: PassthroughSubject<Int, Never>) -> AnyCancellable {
        let tally = Tally()
        return values.sink { _ in tally.count += 1 }
      }
      """)
    #expect(errors.contains { $0.contains("non-Sendable type 'Tally'") }, "\(errors)")
  }

  @Test(.enabled(if: Compiler.swiftc != nil)) func mainActorStateCannotBeWrittenFromElsewhere()
    async throws
  {
    let errors = try await Compiler.typecheck(
      """
      import Streams

      @MainActor final class ViewModel { var items: [Int] = [] }

      nonisolated func bind(_ model: ViewModel, _ values: PassthroughSubject<Int, Never>)
        -> AnyCancellable
      {
        values.sink { model.items.append($0) }
      }
      """)
    #expect(errors.contains { $0.contains("main actor-isolated") }, "\(errors)")
  }
}

/// The toolchain's compiler, run on a source file against the modules of this build.
enum Compiler {
  /// `swiftc` from `PATH`, if there is one.
  static let swiftc: URL? = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    return path.split(separator: ":")
      .map { URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc") }
      .first { FileManager.default.isExecutableFile(atPath: $0.path) }
  }()

  /// Type-checks `source` in Swift 6 mode and returns the compiler's error lines.
  static func typecheck(_ source: String) async throws -> [String] {
    let directory = try TemporaryDirectory(prefix: "streams-compile")
    defer { directory.remove() }
    let file = directory.file("main.swift")
    try source.write(to: file, atomically: true, encoding: .utf8)
    // The test binary sits in the build directory, next to `Modules`.
    let modules = try ChildProcess.locateExecutable().deletingLastPathComponent()
      .appendingPathComponent("Modules")
    let compiler = try ChildProcess(
      ["-typecheck", "-swift-version", "6", "-I", modules.path, file.path],
      executableURL: swiftc)
    _ = try await compiler.waitForExit(timeout: .seconds(120))
    return compiler.standardError.split(separator: "\n").map(String.init)
      .filter { $0.contains("error:") }
  }
}
