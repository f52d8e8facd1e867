import FogKit
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// An HTTP server that speaks CloudKit Web Services for one FogKit store, with its
/// authentication (API tokens, web auth tokens, server-to-server keys) and the web console.
///
/// ```swift
/// let server = try FogServer(store: URL(fileURLWithPath: "notes-store"))
/// try await server.run()   // http://127.0.0.1:8080/database/1/<container>/development/public/…
/// ```
///
/// Every request goes through FogKit's access policy as the caller its credentials name:
/// the server adds no path around roles, sharing or isolation. `fog serve` runs one.
public final class FogServer: Sendable {
    /// Where a server listens and how it treats its callers.
    public struct Configuration: Sendable {
        /// The host to bind: `127.0.0.1` by default.
        public var host: String
        /// The port to bind; `0` picks a free one (``run(onListening:)`` tells which).
        public var port: Int
        /// How long a web auth token a response hands out lasts; 30 minutes, as CloudKit's.
        public var webAuthTokenLifetime: TimeInterval
        /// How far a server-to-server request's date may be from the server's clock.
        public var signatureWindow: TimeInterval
        /// How long a long poll for notifications waits before it answers with none.
        public var longPollTimeout: TimeInterval
        /// The largest request body accepted, in bytes (asset uploads have their own limit,
        /// the store's maximum asset size).
        public var maximumBodySize: Int
        /// How long a connection may stay idle (a slow client) before it is closed.
        public var idleTimeout: TimeInterval
        /// The URL clients reach the server at, for the URLs it hands out (sign-in,
        /// uploads, downloads, notifications); by default `http://host:port`.
        public var publicURL: String?
        /// The options the store is opened with.
        public var store: Container.Configuration
        /// The lowest level of the messages the server logs (to standard error).
        public var logLevel: Logger.Level = .info
        /// The logger the server and Hummingbird log to, at ``logLevel``; `nil` (the default):
        /// FogServer's own handler, which writes lines to standard error in `StreamLogHandler`'s
        /// format but formats a request's metadata only when a line is written. Give a logger
        /// here to send the server's messages to the `LoggingSystem` backend of your choice.
        public var logger: Logger?
        /// How many failed sign-ins (`POST /signin`) one account name may have within
        /// ``signInWindow`` before further attempts for it are refused with `THROTTLED`
        /// until the window passes; 5 by default.
        public var signInAttemptsPerAccount = 5
        /// How many failed sign-ins one client address may have within ``signInWindow``,
        /// whatever the account names, before it is refused likewise; 20 by default.
        public var signInAttemptsPerClient = 20
        /// The window failed sign-ins are counted in, from the first failure; 60 seconds by default.
        public var signInWindow: TimeInterval = 60
        /// The most account names and client addresses whose failures are kept at once (the
        /// one counted longest is forgotten first); 10,000 by default.
        public var signInTrackedKeys = 10_000

        /// The default options: loopback, port 8080.
        public init(
            host: String = "127.0.0.1", port: Int = 8080,
            webAuthTokenLifetime: TimeInterval = ServerCredentials.defaultWebAuthTokenLifetime,
            signatureWindow: TimeInterval = 300, longPollTimeout: TimeInterval = 30, maximumBodySize: Int = 4 << 20,
            idleTimeout: TimeInterval = 60, publicURL: String? = nil, store: Container.Configuration = .init()
        ) {
            self.host = host
            self.port = port
            self.webAuthTokenLifetime = webAuthTokenLifetime
            self.signatureWindow = signatureWindow
            self.longPollTimeout = longPollTimeout
            self.maximumBodySize = maximumBodySize
            self.idleTimeout = idleTimeout
            self.publicURL = publicURL
            self.store = store
        }
    }

    /// The server's options.
    public let configuration: Configuration
    /// The container identifier of the store it serves.
    public let containerIdentifier: String
    let state: ServerState

    /// Opens the store in `directory` for serving.
    ///
    /// - Throws: ``ServerSetupError`` when the folder holds no store (`fog init` makes
    ///   one); ``FogError`` when the store cannot be opened.
    public convenience init(store directory: URL, configuration: Configuration = Configuration()) throws {
        try self.init(store: .directory(directory), configuration: configuration)
    }

    /// Opens the store at `location` for serving: a folder, or a store on a database server
    /// (`.postgres(_:)`), which several server processes may serve at once. The credentials
    /// of a store on a server are kept in the store, so every process accepts the same ones.
    ///
    /// - Throws: ``ServerSetupError`` when there is no store there (`fog init` makes one);
    ///   ``FogError`` when the store cannot be opened.
    public init(store location: StoreLocation, configuration: Configuration = Configuration()) throws {
        guard let identifier = try Container.storedIdentifier(in: location) else {
            throw ServerSetupError(
                "\(location) holds no FogKit store; create one with `fog init --store \(location) --container iCloud.com.example.app`"
            )
        }
        self.configuration = configuration
        containerIdentifier = identifier
        let store = try ServerStore(identifier: identifier, location: location, configuration: configuration.store)
        state = try ServerState(
            store: store,
            credentials: CredentialCache(vault: CredentialVault.of(location, administrator: store.administrator(.development))),
            configuration: configuration)
    }

    /// Serves until the task is cancelled or the process gets SIGINT or SIGTERM.
    public func run() async throws {
        try await run(onListening: { _ in })
    }

    /// Serves, calling `onListening` with the bound port once the server accepts connections
    /// (the port chosen when ``Configuration/port`` is 0).
    public func run(onListening: @escaping @Sendable (Int) async -> Void) async throws {
        let state = self.state
        var logger = configuration.logger ?? Logger(label: "FogServer") { ServerLogHandler(label: $0) }
        logger.logLevel = configuration.logLevel
        let application = Application(
            responder: ServerResponder(state: state),
            server: .http1(configuration: .init(idleTimeout: .milliseconds(Int64(configuration.idleTimeout * 1000)))),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "FogServer"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                state.setPort(port)
                await onListening(port)
            },
            logger: logger
        )
        defer { state.store.close() }
        // SIGINT and SIGTERM shut down gracefully, and so does cancelling the task that runs the
        // server (tests and embedding programs stop it that way): connections finish their
        // requests and close instead of being torn down mid-flight.
        let group = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await withTaskCancellationHandler {
            try await group.run()
        } onCancel: {
            Task { await group.triggerGracefulShutdown() }
        }
    }
}

/// A server that cannot start: no store in the folder, or bad options.
public struct ServerSetupError: Error, CustomStringConvertible, Sendable {
    /// What is wrong and what to do.
    public let description: String
    init(_ description: String) { self.description = description }
}
