import FogKit
import Foundation
import Synchronization

/// What every request of a running server shares: the store, the credentials, the
/// signature checker, the URLs it hands out.
final class ServerState: Sendable {
    let store: ServerStore
    let credentials: CredentialCache
    let signatures: RequestSignatureChecker
    let sessions: WebAuthSessions
    let configuration: FogServer.Configuration
    /// The folder asset uploads wait in until a record saves them.
    let staging: AssetStaging
    /// Failed sign-ins, per account and per client.
    let signInThrottle: SignInThrottle
    private let boundPort = Mutex<Int?>(nil)

    init(store: ServerStore, credentials: CredentialCache, configuration: FogServer.Configuration) {
        self.store = store
        self.credentials = credentials
        self.configuration = configuration
        signatures = RequestSignatureChecker(window: configuration.signatureWindow)
        sessions = WebAuthSessions(credentials: credentials)
        staging = AssetStaging(storeDirectory: store.directory)
        signInThrottle = SignInThrottle(
            accountLimit: configuration.signInAttemptsPerAccount, clientLimit: configuration.signInAttemptsPerClient,
            window: configuration.signInWindow, maximumKeys: configuration.signInTrackedKeys)
    }

    func setPort(_ port: Int) { boundPort.withLock { $0 = port } }

    /// The URL clients reach the server at, without a trailing slash.
    var baseURL: String {
        if let url = configuration.publicURL { return url.hasSuffix("/") ? String(url.dropLast()) : url }
        let port = boundPort.withLock { $0 } ?? configuration.port
        let host = configuration.host == "0.0.0.0" || configuration.host == "::" ? "127.0.0.1" : configuration.host
        return "http://\(host):\(port)"
    }

    /// The sign-in page a caller that must sign in is sent to.
    var signInURL: String { "\(baseURL)/signin" }
}
