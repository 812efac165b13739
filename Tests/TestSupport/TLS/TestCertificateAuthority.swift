import Foundation

/// A certificate authority made at test time, in a temporary directory, with the `openssl`
/// command-line tool, and the certificates TLS tests need, all signed by it (P-256 keys, so
/// making them takes a few milliseconds):
///
/// - ``server``: for `127.0.0.1`, `::1` and `localhost` (subjectAltName), valid now;
/// - ``expiredServer``: the same names, valid only on 1 January 2020;
/// - ``otherHostServer``: valid now, but for `other.example` only;
/// - ``commonNameOnlyServer``: valid now, `CN=localhost` but no subjectAltName (RFC 6125
///   clients refuse it for `localhost`);
/// - ``client``: a client certificate (`CN=tether-test-client`, clientAuth) for mutual TLS;
/// - ``encryptedClient``: the same client certificate with its key encrypted under
///   ``clientKeyPassphrase``;
/// - ``serverAndClient``: like ``server``, but also good as a client certificate (etcd's JSON
///   gateway dials its own TLS listener with its server certificate, which must then pass
///   `--client-cert-auth` too).
///
/// ```swift
/// let authority = try TestCertificateAuthority()
/// let nginx = try await NginxTLSServer.start(certificate: authority.server)
/// // trust authority.certificatePEM, connect to 127.0.0.1:nginx.port
/// ```
///
/// `TestCertificateAuthority.executable` is `nil` when `openssl` is not installed; tests skip
/// then. Keep the value alive while the files are used.
public final class TestCertificateAuthority: Sendable {
  /// A certificate and its private key, as files and as PEM text.
  public struct Identity: Sendable {
    /// The certificate's file (PEM).
    public let certificateFile: URL
    /// The private key's file (PEM, unencrypted).
    public let keyFile: URL
    /// The certificate in PEM.
    public var certificatePEM: String {
      (try? String(contentsOf: certificateFile, encoding: .utf8)) ?? ""
    }
    /// The private key in PEM.
    public var keyPEM: String { (try? String(contentsOf: keyFile, encoding: .utf8)) ?? "" }
  }

  /// The directory holding every file.
  public let directory: TemporaryDirectory
  /// The authority's own (self-signed) certificate and key.
  public let authority: Identity
  /// A server certificate for `127.0.0.1`, `::1` and `localhost`.
  public let server: Identity
  /// A server certificate for the same names that expired on 2 January 2020.
  public let expiredServer: Identity
  /// A server certificate for `other.example` only.
  public let otherHostServer: Identity
  /// A server certificate whose only name is its subject's `CN=localhost`.
  public let commonNameOnlyServer: Identity
  /// A client certificate for mutual TLS.
  public let client: Identity
  /// ``client``'s certificate with its key in encrypted PEM (`ENCRYPTED PRIVATE KEY`, AES-256),
  /// under ``clientKeyPassphrase``.
  public let encryptedClient: Identity
  /// The passphrase of ``encryptedClient``'s key.
  public static let clientKeyPassphrase = "tether test passphrase"
  /// A certificate for `127.0.0.1`, `::1` and `localhost` that is also a client certificate.
  public let serverAndClient: Identity

  /// The `openssl` tool, if installed.
  public static let executable: String? = {
    let candidates =
      ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
      + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map {
        "\($0)/openssl"
      }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
  }()

  /// The authority's certificate in PEM: what a client adds to trust the servers.
  public var certificatePEM: String { authority.certificatePEM }

  private static let sharedTask = LockedState<Task<TestCertificateAuthority, any Error>?>(nil)

  /// One authority for the whole test process, made once on a thread of its own: making one
  /// runs `openssl` several times and waits for each, which must not hold a thread of Swift's
  /// cooperative pool (two on CI) while hundreds of other tests run.
  public static func shared() async throws -> TestCertificateAuthority {
    let task = sharedTask.withLock { task in
      if let task { return task }
      let made = Task {
        try await onDedicatedThread { Result { try TestCertificateAuthority() } }.get()
      }
      task = made
      return made
    }
    return try await task.value
  }

  /// Makes the authority and its certificates (blocking: see ``shared()``).
  ///
  /// - Throws: ``ChildProcessError`` when `openssl` is missing, or a description of the
  ///   command that failed.
  public init() throws {
    guard let executable = Self.executable else {
      throw ChildProcessError.executableNotFound(name: "openssl", searched: ["PATH", "/usr/bin"])
    }
    let directory = try TemporaryDirectory(prefix: "tether-tls-ca")
    self.directory = directory
    let maker = CertificateMaker(executable: executable, directory: directory)
    authority = try maker.makeAuthority()
    let serverNames = "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost"
    server = try maker.make(
      "server", subject: "/CN=localhost", extensions: [serverNames, "extendedKeyUsage=serverAuth"])
    expiredServer = try maker.make(
      "expired", subject: "/CN=localhost",
      extensions: [serverNames, "extendedKeyUsage=serverAuth"],
      validity: ("20200101000000Z", "20200102000000Z"))
    otherHostServer = try maker.make(
      "other-host", subject: "/CN=other.example",
      extensions: ["subjectAltName=DNS:other.example", "extendedKeyUsage=serverAuth"])
    commonNameOnlyServer = try maker.make(
      "cn-only", subject: "/CN=localhost", extensions: ["extendedKeyUsage=serverAuth"])
    client = try maker.make(
      "client", subject: "/CN=tether-test-client", extensions: ["extendedKeyUsage=clientAuth"])
    encryptedClient = try maker.encrypt(
      client, as: "client-encrypted", passphrase: Self.clientKeyPassphrase)
    serverAndClient = try maker.make(
      "server-and-client", subject: "/CN=localhost",
      extensions: [serverNames, "extendedKeyUsage=serverAuth,clientAuth"])
  }
}

/// Runs `openssl` in the authority's directory.
private struct CertificateMaker {
  let executable: String
  let directory: TemporaryDirectory

  private static let ellipticCurveKey = [
    "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
  ]

  func makeAuthority() throws -> TestCertificateAuthority.Identity {
    try run(
      ["req", "-x509"] + Self.ellipticCurveKey + [
        "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Tether Test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
      ])
    // `openssl ca` (the one command of 3.0 that sets any validity dates) keeps a database.
    try Data().write(to: directory.file("index.txt"))
    try Data("1000\n".utf8).write(to: directory.file("serial"))
    try Data(
      """
      [ca]
      default_ca = test
      [test]
      database = index.txt
      new_certs_dir = .
      serial = serial
      default_md = sha256
      policy = anything
      unique_subject = no
      [anything]
      commonName = supplied

      """.utf8
    ).write(to: directory.file("ca.cnf"))
    return identity("ca")
  }

  /// A key and a certificate signed by the authority, valid from an hour ago for two days
  /// unless `validity` (two `YYYYMMDDHHMMSSZ` dates) says otherwise.
  func make(
    _ name: String, subject: String, extensions: [String],
    validity: (start: String, end: String)? = nil
  ) throws -> TestCertificateAuthority.Identity {
    try run(
      ["req", "-new"] + Self.ellipticCurveKey + [
        "-keyout", "\(name).key", "-out", "\(name).csr", "-subj", subject,
      ])
    try Data((extensions + ["basicConstraints=CA:FALSE", ""]).joined(separator: "\n").utf8)
      .write(to: directory.file("\(name).ext"))
    let dates =
      validity.map { ["-startdate", $0.start, "-enddate", $0.end] } ?? ["-days", "2"]
    try run(
      [
        "ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile", "ca.key",
        "-in", "\(name).csr", "-out", "\(name).pem", "-extfile", "\(name).ext", "-notext",
      ] + dates)
    return identity(name)
  }

  /// `identity` with its key encrypted under `passphrase` (the certificate file is shared).
  func encrypt(
    _ identity: TestCertificateAuthority.Identity, as name: String, passphrase: String
  ) throws -> TestCertificateAuthority.Identity {
    try run([
      "pkey", "-in", identity.keyFile.lastPathComponent, "-out", "\(name).key", "-aes-256-cbc",
      "-passout", "pass:\(passphrase)",
    ])
    return TestCertificateAuthority.Identity(
      certificateFile: identity.certificateFile, keyFile: directory.file("\(name).key"))
  }

  private func identity(_ name: String) -> TestCertificateAuthority.Identity {
    TestCertificateAuthority.Identity(
      certificateFile: directory.file("\(name).pem"), keyFile: directory.file("\(name).key"))
  }

  private func run(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = directory.url
    let errors = Pipe()
    process.standardOutput = FileHandle.nullDevice
    process.standardError = errors
    try process.run()
    let output = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw CertificateMakerError(
        command: "openssl " + arguments.joined(separator: " "),
        output: String(decoding: output, as: UTF8.self))
    }
  }
}

/// An `openssl` command that failed, with what it printed.
public struct CertificateMakerError: Error, CustomStringConvertible {
  /// The command line.
  public let command: String
  /// Its standard error.
  public let output: String

  /// The command and its output.
  public var description: String { "\(command) failed: \(output)" }
}
