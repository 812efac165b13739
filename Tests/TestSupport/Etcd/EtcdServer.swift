import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real etcd (a single member or a three-member cluster) on free loopback ports with
/// temporary data directories, as child processes.
///
/// ```swift
/// let etcd = try await EtcdServer.start(members: 3)
/// let urls = etcd.clientURLs           // one per member
/// etcd.kill(member: etcd.leader() ?? 0) // SIGKILL, as a crash would
/// etcd.pause(member: 1); etcd.resume(member: 1)
/// ```
///
/// `EtcdServer.executable` is `nil` when etcd is not installed (`Scripts/install-test-deps`
/// installs Debian's `etcd-server`); tests skip then. Every member is killed when the value is
/// released.
public final class EtcdServer: Sendable {
  /// One member.
  public struct Member: Sendable {
    /// The member's name (`m0`, `m1`, …).
    public let name: String
    /// The client URL.
    public let clientURL: URL
    /// The client port.
    public let clientPort: UInt16
    /// The member's `https` client URL when it was started with TLS (``clientURL`` then
    /// stays a plain listener the test support uses to watch the cluster's health).
    public let secureClientURL: URL?
    let peerPort: UInt16
    let arguments: [String]
  }

  /// The members, in start order.
  public let members: [Member]
  /// The data directories' parent.
  public let directory: TemporaryDirectory
  private let executable: String
  private let processes: LockedState<[Running]>

  /// etcd's binary, if installed.
  public static let executable: String? = {
    let candidates =
      ["/usr/bin/etcd", "/usr/local/bin/etcd", "/opt/homebrew/bin/etcd"]
      + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map {
        "\($0)/etcd"
      }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
  }()

  /// How members serve TLS: `--cert-file`/`--key-file`, and with a client authority
  /// `--client-cert-auth --trusted-ca-file` (mutual TLS).
  public struct TLS: Sendable {
    /// The members' certificate; it must also be a client certificate (etcd's gateway dials
    /// its own listener with it): ``TestCertificateAuthority/serverAndClient``.
    public var certificate: TestCertificateAuthority.Identity
    /// The authority client certificates must come from, or `nil` for no client
    /// certificates.
    public var clientCertificateAuthority: TestCertificateAuthority.Identity?

    /// A TLS setting.
    public init(
      certificate: TestCertificateAuthority.Identity,
      clientCertificateAuthority: TestCertificateAuthority.Identity? = nil
    ) {
      self.certificate = certificate
      self.clientCertificateAuthority = clientCertificateAuthority
    }
  }

  /// Starts `members` members (1 or 3) and waits until the cluster has a leader and answers.
  ///
  /// - Parameters:
  ///   - arguments: Extra command-line flags for every member.
  ///   - tls: With it, every member also listens for `https` clients
  ///     (``Member/secureClientURL``).
  /// - Throws: when etcd is not installed or does not become ready within 20 s.
  public static func start(
    members count: Int = 1, arguments: [String] = [], tls: TLS? = nil
  ) async throws
    -> EtcdServer
  {
    guard let executable else {
      throw ChildProcessError.executableNotFound(name: "etcd", searched: ["PATH", "/usr/bin"])
    }
    var ports: [UInt16] = []
    var probes: [TestHTTPServer] = []
    let portsPerMember = tls == nil ? 2 : 3
    for _ in 0..<(count * portsPerMember) {
      let probe = try await TestHTTPServer.start()
      ports.append(probe.port)
      probes.append(probe)
    }
    for probe in probes { probe.stop() }
    let directory = try TemporaryDirectory()
    let names = (0..<count).map { "m\($0)" }
    let initialCluster = (0..<count).map {
      "\(names[$0])=http://127.0.0.1:\(ports[portsPerMember * $0 + 1])"
    }
    .joined(separator: ",")
    var members: [Member] = []
    for index in 0..<count {
      let client = ports[portsPerMember * index]
      let peer = ports[portsPerMember * index + 1]
      let secure = tls == nil ? nil : ports[portsPerMember * index + 2]
      var listen = "http://127.0.0.1:\(client)"
      var advertise = listen
      var tlsArguments: [String] = []
      if let tls, let secure {
        listen += ",https://127.0.0.1:\(secure)"
        advertise = "https://127.0.0.1:\(secure)"
        tlsArguments = [
          "--cert-file", tls.certificate.certificateFile.path,
          "--key-file", tls.certificate.keyFile.path,
        ]
        if let authority = tls.clientCertificateAuthority {
          tlsArguments += [
            "--client-cert-auth", "--trusted-ca-file", authority.certificateFile.path,
          ]
        }
      }
      let arguments =
        [
          "--name", names[index], "--data-dir", directory.file(names[index]).path,
          "--listen-client-urls", listen,
          "--advertise-client-urls", advertise,
          "--listen-peer-urls", "http://127.0.0.1:\(peer)",
          "--initial-advertise-peer-urls", "http://127.0.0.1:\(peer)",
          "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
          "--initial-cluster-token", "tether-\(ports[0])", "--log-level", "error",
          "--heartbeat-interval", "50", "--election-timeout", "500",
        ] + tlsArguments + arguments
      members.append(
        Member(
          name: names[index], clientURL: URL(string: "http://127.0.0.1:\(client)")!,
          clientPort: client,
          secureClientURL: secure.map { URL(string: "https://127.0.0.1:\($0)")! },
          peerPort: peer, arguments: arguments))
    }
    let server = EtcdServer(
      members: members, directory: directory, executable: executable,
      processes: try await launchAll(executable, members, in: directory))
    do {
      try await waitUntil("etcd to elect a leader and answer", timeout: .seconds(15)) {
        await server.leader() != nil
      }
    } catch {
      server.stop()
      throw error
    }
    return server
  }

  /// A running member: etcd itself, and the shell that ties it to this process.
  struct Running: Sendable {
    /// `sh`, reading its standard input from a pipe this process holds: when this process
    /// ends in any way (even SIGKILL, even with static servers never released), the pipe
    /// closes and the shell kills etcd, so no member outlives its test run.
    let guardian: Process
    let guardianInput: Pipe
    /// etcd's process identifier (for kill, SIGSTOP, SIGCONT).
    let pid: Int32

    var isRunning: Bool { Glibc.kill(pid, 0) == 0 && !isZombie }

    /// A killed etcd stays a zombie until the shell reaps it.
    private var isZombie: Bool {
      let status = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
      guard let close = status.lastIndex(of: ")") else { return true }
      return status[status.index(after: close)...].trimmingCharacters(in: .whitespaces)
        .hasPrefix("Z")
    }
  }

  private static func launch(
    _ executable: String, _ member: Member, in directory: TemporaryDirectory
  ) async throws -> Running {
    let log = directory.file("\(member.name).log").path
    let pidFile = directory.file("\(member.name).pid").path
    try? FileManager.default.removeItem(atPath: pidFile)
    let guardian = Process()
    guardian.executableURL = URL(fileURLWithPath: "/bin/sh")
    guardian.arguments =
      [
        "-c",
        #""$0" "$@" </dev/null >/dev/null 2>>"$LOG" & echo $! > "$PIDFILE"; "#
          + #"read _; kill -CONT $! 2>/dev/null; kill -9 $! 2>/dev/null"#,
        executable,
      ] + member.arguments
    guardian.environment = ["LOG": log, "PIDFILE": pidFile, "PATH": "/usr/bin:/bin"]
    let input = Pipe()
    guardian.standardInput = input
    guardian.standardOutput = FileHandle.nullDevice
    guardian.standardError = FileHandle.nullDevice
    try guardian.run()
    var pid: Int32 = 0
    try await waitUntil("etcd's pid", timeout: .seconds(5)) {
      let text = (try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? ""
      pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
      return pid > 0
    }
    return Running(guardian: guardian, guardianInput: input, pid: pid)
  }

  private static func launchAll(
    _ executable: String, _ members: [Member], in directory: TemporaryDirectory
  ) async throws -> [Running] {
    var running: [Running] = []
    for member in members { running.append(try await launch(executable, member, in: directory)) }
    return running
  }

  private init(
    members: [Member], directory: TemporaryDirectory, executable: String, processes: [Running]
  ) {
    self.members = members
    self.directory = directory
    self.executable = executable
    self.processes = LockedState(processes)
  }

  deinit {
    // Released with the test's holders, whose last requests are being cancelled right now:
    // give the cancellations a moment to land before the members go (see `shutDown`).
    let processes = processes.withLock { $0 }
    DispatchQueue.global().asyncAfter(deadline: .now() + 2) { Self.shutDown(processes) }
  }

  /// Stops members gracefully (SIGTERM: etcd answers the requests in flight before closing),
  /// and kills what is still running five seconds later.
  ///
  /// Not SIGKILL at once: a request whose connection closes before any answer arrives can
  /// crash the client process in swift-corelibs-foundation's URLSession ("Transfer completed,
  /// but there's no response", swiftlang/swift-corelibs-foundation#5285), and tests end while
  /// their holders' last requests are still in flight.
  private static func shutDown(_ processes: [Running]) {
    for process in processes where process.isRunning {
      Glibc.kill(process.pid, SIGCONT)
      Glibc.kill(process.pid, SIGTERM)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + 5) {
      for process in processes {
        if process.isRunning { Glibc.kill(process.pid, SIGKILL) }
        try? process.guardianInput.fileHandleForWriting.close()
      }
    }
  }

  private func process(_ index: Int) -> Running { processes.withLock { $0[index] } }

  /// Every member's client URL.
  public var clientURLs: [URL] { members.map(\.clientURL) }

  /// Every member's `https` client URL (empty unless started with TLS).
  public var secureClientURLs: [URL] { members.compactMap(\.secureClientURL) }

  /// The index of the member that is the leader, asked of each running member; `nil` when
  /// none answers with a leader.
  public func leader() async -> Int? {
    for (index, member) in members.enumerated() where isRunning(member: index) {
      guard let status = await post(member, "/v3/maintenance/status", "{}"),
        let header = status["header"] as? [String: Any],
        let memberID = header["member_id"] as? String,
        let leader = status["leader"] as? String, leader != "0"
      else { continue }
      if leader == memberID { return index }
      // Another member leads: find it by asking the others.
      for (other, candidate) in members.enumerated() where other != index {
        if let answer = await post(candidate, "/v3/maintenance/status", "{}"),
          let header = answer["header"] as? [String: Any],
          header["member_id"] as? String == leader
        {
          return other
        }
      }
    }
    return nil
  }

  /// Sends `body` to `path` on `member` (with an auth `token`, if given) and returns the JSON
  /// answer, or `nil`.
  public func post(
    _ member: Member, _ path: String, _ body: String, token: String? = nil
  ) async -> [String: Any]? {
    guard let index = members.firstIndex(where: { $0.name == member.name }),
      isRunning(member: index), let client = try? LoopbackClient(port: member.clientPort)
    else { return nil }
    defer { client.close() }
    let request =
      "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      + (token.map { "Authorization: \($0)\r\n" } ?? "")
      + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
    guard (try? client.send(request)) != nil,
      let data = try? await client.readUntilClosed(timeout: .seconds(2)),
      let split = data.range(of: Data("\r\n\r\n".utf8))
    else { return nil }
    let head = String(decoding: data[..<split.lowerBound], as: UTF8.self)
    guard head.hasPrefix("HTTP/1.1 200") else { return nil }
    var payload = Data(data[split.upperBound...])
    if head.lowercased().contains("transfer-encoding: chunked") { payload = Self.dechunk(payload) }
    return (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
  }

  private static func dechunk(_ data: Data) -> Data {
    var output = Data()
    var rest = data[...]
    while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
      let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self), radix: 16) ?? 0
      if size == 0 { break }
      let start = lineEnd.upperBound
      guard rest.distance(from: start, to: rest.endIndex) >= size else { break }
      let end = rest.index(start, offsetBy: size)
      output.append(rest[start..<end])
      rest = rest[min(rest.endIndex, rest.index(end, offsetBy: 2))...]
    }
    return output
  }

  /// SIGKILLs member `index`, as a crash would.
  public func kill(member index: Int) {
    let process = process(index)
    guard process.isRunning else { return }
    Glibc.kill(process.pid, SIGCONT)
    Glibc.kill(process.pid, SIGKILL)
  }

  /// Pauses member `index` (SIGSTOP): its connections stay open and silent.
  public func pause(member index: Int) {
    Glibc.kill(process(index).pid, SIGSTOP)
  }

  /// Resumes a paused member (SIGCONT).
  public func resume(member index: Int) {
    Glibc.kill(process(index).pid, SIGCONT)
  }

  /// Whether member `index` is still running.
  public func isRunning(member index: Int) -> Bool { process(index).isRunning }

  /// Starts a killed member again on its data directory and ports, and waits until it
  /// answers with a leader.
  public func restart(member index: Int) async throws {
    kill(member: index)
    try await waitUntil("member \(index) to exit", timeout: .seconds(5)) {
      !isRunning(member: index)
    }
    var member = members[index]
    member = Member(
      name: member.name, clientURL: member.clientURL, clientPort: member.clientPort,
      secureClientURL: member.secureClientURL, peerPort: member.peerPort,
      arguments: member.arguments.map { $0 == "new" ? "existing" : $0 })
    let process = try await Self.launch(executable, member, in: directory)
    processes.withLock { $0[index] = process }
    try await waitUntil("member \(index) to answer", timeout: .seconds(20)) {
      await post(members[index], "/v3/kv/range", #"{"key":"AA=="}"#) != nil
    }
  }

  /// Stops every member (gracefully; see `deinit`).
  public func stop() {
    Self.shutDown(processes.withLock { $0 })
  }
}
