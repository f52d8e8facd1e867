import FogKit
import Foundation

/// Where a store's server credentials are kept: `credentials.json` beside a store in a
/// folder, or a store document (`Container.Administrator.storeDocument(named:)`) in a store
/// on a database server, so that every server process sharing that store accepts the same
/// credentials.
enum CredentialVault: Sendable {
    case folder(URL)
    case document(AdministratorHandle)

    /// The store document's name.
    static let documentName = "FogServer.credentials"

    /// The vault of the store at `location`: its folder, or a document in it (opened
    /// through `administrator`, or a new administrator on the store).
    static func of(_ location: StoreLocation, administrator: Container.Administrator? = nil) throws -> CredentialVault {
        if location.isDirectory { return .folder(location.url) }
        if let administrator { return .document(AdministratorHandle(administrator, owned: false)) }
        guard let identifier = try Container.storedIdentifier(in: location) else {
            throw CredentialError("\(location) holds no FogKit store; create one with `fog init`")
        }
        return .document(AdministratorHandle(try Container.Administrator(identifier: identifier, store: location), owned: true))
    }

    /// The credentials, or `nil` when none were written yet.
    func read() throws -> CredentialFile? {
        switch self {
        case .folder(let directory): return try CredentialFile.read(in: directory)
        case .document(let handle):
            return try handle.administrator.storeDocument(named: Self.documentName).map {
                try CredentialFile.decode($0, from: "the store's credentials")
            }
        }
    }

    /// Changes the credentials (making them, with a fresh secret, when missing) and returns
    /// what `change` returned; concurrent changes from any process are serialised.
    func update<T>(_ change: (inout CredentialFile) throws -> T) throws -> T {
        switch self {
        case .folder(let directory): return try CredentialFile.update(in: directory, change)
        case .document(let handle):
            return try handle.administrator.updateStoreDocument(named: Self.documentName) { data in
                var file =
                    try data.map { try CredentialFile.decode($0, from: "the store's credentials") }
                    ?? CredentialFile(secret: Data(SecureBytes.random(32)).base64EncodedString())
                let result = try change(&file)
                data = try JSONEncoder.sorted.encode(file)
                return result
            }
        }
    }

    /// What tells whether the credentials changed since they were read: the file's
    /// modification date; `nil` for a document, which is read again on every miss.
    var stamp: Date? {
        switch self {
        case .folder(let directory):
            (try? FileManager.default.attributesOfItem(atPath: CredentialFile.url(in: directory).path))?[.modificationDate] as? Date
        case .document: nil
        }
    }
}

/// An administrator a vault reads through, closed when the vault is done with it if the
/// vault opened it.
final class AdministratorHandle: Sendable {
    let administrator: Container.Administrator
    private let owned: Bool
    init(_ administrator: Container.Administrator, owned: Bool) {
        self.administrator = administrator
        self.owned = owned
    }
    deinit { if owned { administrator.close() } }
}
