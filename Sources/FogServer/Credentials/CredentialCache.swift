import Crypto
import Foundation
import Synchronization

/// A server's copy of its credentials (``CredentialVault``), read again when a credential it
/// does not know arrives and they changed since (so tokens minted by `fog` while the server
/// runs work on their first use).
final class CredentialCache: Sendable {
    let vault: CredentialVault
    private struct State: Sendable {
        var file: CredentialFile
        var secret: Data
        var modified: Date?
        /// When the file was read: a file changed within ``CredentialCache/racyWindow`` before
        /// it may change again with the same modification time.
        var read: Date
        var apiTokens: Set<String>
        var administratorTokens: Set<String>
        var keys: [String: CredentialFile.Key]
    }
    private let state: Mutex<State>

    init(vault: CredentialVault) throws {
        self.vault = vault
        // Make the credentials (and their secret) when the store has none yet.
        let file = try vault.update { $0 }
        state = Mutex(Self.state(file, modified: vault.stamp))
    }

    var secret: SymmetricKey { SymmetricKey(data: state.withLock { $0.secret }) }

    func isAPIToken(_ token: String) -> Bool { contains { $0.apiTokens.contains(token) } }
    func isAdministratorToken(_ token: String) -> Bool { contains { $0.administratorTokens.contains(token) } }
    func key(_ keyID: String) -> CredentialFile.Key? { lookup { $0.keys[keyID] } }

    /// Whether `password` is `user`'s sign-in password. Reads the file afresh, so a password
    /// `fog user password` just set or changed counts at once.
    func checkPassword(_ password: String, user: String) -> Bool {
        guard let hash = (try? vault.read())??.passwords?[user] else { return false }
        return hash.matches(password)
    }

    /// Asks `find`, and asks again after rereading the file when it answered no and the file
    /// changed.
    private func lookup<T: Sendable>(_ find: (State) -> T?) -> T? {
        if let found = state.withLock({ state -> T? in find(state) }) { return found }
        let modified = vault.stamp
        let changed =
            modified == nil
            || state.withLock { state in
                // File times come from a coarse clock: two writes a few milliseconds apart can
                // leave the same time, so a file read soon after a write is read again.
                state.modified != modified || state.modified.map { state.read.timeIntervalSince($0) < Self.racyWindow } ?? true
            }
        guard changed, let file = try? vault.read() else { return nil }
        let fresh = Self.state(file, modified: modified)
        state.withLock { $0 = fresh }
        return find(fresh)
    }

    private func contains(_ find: (State) -> Bool) -> Bool { lookup { find($0) ? true : nil } ?? false }

    /// How long after a write a read of the file still counts as racy (`git` calls such an
    /// index entry "racily clean").
    static let racyWindow: TimeInterval = 2

    private static func state(_ file: CredentialFile, modified: Date?) -> State {
        State(
            file: file, secret: Data(base64Encoded: file.secret) ?? Data(), modified: modified, read: Date(),
            apiTokens: Set(file.apiTokens), administratorTokens: Set(file.administratorTokens),
            keys: Dictionary(file.keys.map { ($0.keyID, $0) }, uniquingKeysWith: { $1 }))
    }
}
