import Foundation

/// What `credentials.json` beside a store holds: the API tokens, server-to-server keys and
/// administrator tokens a FogServer accepts, and the secret its web auth tokens are signed
/// with. The file is written with mode 0600, replaced whole (written beside and renamed),
/// under an exclusive `flock` on `credentials.lock`, so `fog` commands and a running server
/// can change it at once.
struct CredentialFile: Codable, Sendable, Equatable {
    /// A server-to-server key: its ID, public key (PEM) and the user it acts as.
    struct Key: Codable, Sendable, Equatable {
        var keyID: String
        var publicKey: String
        var user: String
    }

    /// The secret (base64, 32 bytes) web auth tokens are signed with.
    var secret: String
    var apiTokens: [String] = []
    var keys: [Key] = []
    var administratorTokens: [String] = []
    /// The sign-in page's password hashes by user name (`fog user password`); files written
    /// before passwords existed have none.
    var passwords: [String: PasswordHash]? = nil

    static let fileName = "credentials.json"
    static let lockName = "credentials.lock"

    static func url(in directory: URL) -> URL { directory.appendingPathComponent(fileName) }

    /// The file in `directory`, or `nil` when there is none yet.
    static func read(in directory: URL) throws -> CredentialFile? {
        let url = url(in: directory)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw CredentialError("cannot read \(url.path): \(error)") }
        return try decode(data, from: url.path)
    }

    /// The credentials in `data`, read from `source` (for messages).
    static func decode(_ data: Data, from source: String) throws -> CredentialFile {
        do {
            return try JSONDecoder().decode(CredentialFile.self, from: data)
        } catch {
            throw CredentialError("\(source) is not a credentials file: \(error)")
        }
    }

    /// Changes the file under the lock (making it, with a fresh secret, when missing) and
    /// returns what `change` returned.
    static func update<T>(in directory: URL, _ change: (inout CredentialFile) throws -> T) throws -> T {
        let lockPath = directory.appendingPathComponent(lockName).path
        let fd = open(lockPath, O_CREAT | O_RDWR, 0o600)
        guard fd >= 0 else { throw CredentialError("cannot open \(lockPath): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else { throw CredentialError("cannot lock \(lockPath)") }
        defer { flock(fd, LOCK_UN) }
        var file = try read(in: directory) ?? CredentialFile(secret: Data(SecureBytes.random(32)).base64EncodedString())
        let result = try change(&file)
        let data = try JSONEncoder.sorted.encode(file)
        let temporary = directory.appendingPathComponent(fileName + ".new")
        _ = FileManager.default.createFile(atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600])
        try data.write(to: temporary)
        guard rename(temporary.path, url(in: directory).path) == 0 else {
            throw CredentialError("cannot replace \(url(in: directory).path): \(String(cString: strerror(errno)))")
        }
        return result
    }
}

/// A credentials file that cannot be read or written.
public struct CredentialError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return encoder
    }
}

/// Random bytes from the system's generator, eight at a time.
enum SecureBytes {
    static func random(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            var word = generator.next()
            withUnsafeBytes(of: &word) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
    }

    static func hex(_ count: Int) -> String { random(count).map { String(format: "%02x", $0) }.joined() }
}
