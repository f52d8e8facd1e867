import Crypto
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Encrypts and decrypts the values of a container's encrypted fields
/// (``Record/encryptedValues``) with AES-256-GCM under the container's key.
///
/// The key is ``Container/Configuration/encryptionKey`` when the configuration gives one;
/// otherwise the 32 bytes of the file `encryption.key` in the store's directory (beside
/// `data.mdb`), made with mode 0600 the first time a value is encrypted. A store on a
/// database server keeps no key file: its containers must be given the key, so that the key
/// never sits in the database beside what it protects. A value's stored
/// form is the sealed box of its plain payload (`Docs/OnDiskFormat.md`, "Encrypted fields"),
/// authenticated with the field's key, so that a value copied into another field fails to
/// decrypt rather than read as that field's.
final class FieldCipher: Sendable {
    /// The key file's name in the store directory.
    static let keyFileName = "encryption.key"
    /// The first byte of a sealed plaintext: the layout of what follows.
    static let plaintextVersion: UInt8 = 1

    /// The key file, or `nil` for a store that keeps none (a database server's).
    private let keyFile: URL?
    /// The store, for messages.
    private let store: StoreLocation
    /// The key's bytes once known (`SymmetricKey` is made from them for each use).
    private let key = Mutex<[UInt8]?>(nil)
    /// Whether the key came from the configuration (no file is read or written).
    private let supplied: Bool

    /// A cipher with `suppliedKey`, or the key file in `keyFile` (a folder) when none is given.
    init(keyFile folder: URL?, suppliedKey: Data?, store: StoreLocation) {
        keyFile = folder?.appendingPathComponent(Self.keyFileName)
        self.store = store
        supplied = suppliedKey != nil
        if let suppliedKey { key.withLock { $0 = Array(suppliedKey) } }
    }

    /// The key: the supplied one, the key file's, or (`creating`) a new one written to the file.
    private func currentKey(creating: Bool, field: String) throws(FogError) -> SymmetricKey {
        let bytes = try key.withLock { (key: inout [UInt8]?) throws(FogError) -> [UInt8] in
            if let key { return key }
            if let existing = try readKeyFile() {
                key = existing
                return existing
            }
            guard let keyFile else {
                throw FogError(
                    .badContainer,
                    message:
                        "cannot \(creating ? "encrypt" : "decrypt") field '\(field)': the store at \(store) keeps no key; give the container Configuration.encryptionKey"
                )
            }
            guard creating else {
                throw FogError(
                    .badContainer,
                    message:
                        "cannot decrypt field '\(field)': the store has no encryption key (\(keyFile.path) is missing) and the configuration gives none"
                )
            }
            let made = try createKeyFile(keyFile)
            key = made
            return made
        }
        return SymmetricKey(data: bytes)
    }

    private func readKeyFile() throws(FogError) -> [UInt8]? {
        guard let keyFile else { return nil }
        guard FileManager.default.fileExists(atPath: keyFile.path) else { return nil }
        let data: Data
        do { data = try Data(contentsOf: keyFile) } catch {
            throw FogError(.badContainer, message: "cannot read the encryption key \(keyFile.path): \(error)", underlyingError: error)
        }
        guard data.count == 32 else {
            throw FogError(.badContainer, message: "the encryption key \(keyFile.path) holds \(data.count) bytes, not 32")
        }
        return Array(data)
    }

    /// Writes a new random key to the key file (created exclusively, mode 0600); when another
    /// process made the file first, its key is used.
    private func createKeyFile(_ keyFile: URL) throws(FogError) -> [UInt8] {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let fd = open(keyFile.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            if errno == EEXIST, let existing = try readKeyFile() { return existing }
            throw FogError(.internalError, message: "cannot create the encryption key \(keyFile.path): errno \(errno)")
        }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            unlink(keyFile.path)
            throw FogError(.internalError, message: "cannot write the encryption key \(keyFile.path): errno \(errno)")
        }
        return bytes
    }

    /// The data each sealed value is authenticated with: the field's client key.
    private static func authenticated(_ field: String) -> Data { Data("FogKit encrypted field \(field)".utf8) }

    /// The stored form of `value`, the encrypted field `field`'s: a `bytes` value holding the
    /// sealed box (nonce, ciphertext, tag) of the version byte, type code and plain payload.
    func seal(_ value: FieldValue, field: String) throws(FogError) -> FieldValue {
        let key = try currentKey(creating: !supplied, field: field)
        var w = ByteWriter(capacity: 16 + RecordCodec.payloadSize(of: value))
        w.u8(Self.plaintextVersion)
        w.u8(value.fieldType.rawValue)
        RecordCodec.encodePayload(value, into: &w)
        do {
            let box = try AES.GCM.seal(w.bytes, using: key, authenticating: Self.authenticated(field))
            guard let combined = box.combined else { throw FogError(.internalError, message: "AES-GCM gave no combined box") }
            return .bytes(combined)
        } catch let error as FogError {
            throw error
        } catch {
            throw FogError(.internalError, message: "cannot encrypt field '\(field)': \(error)", underlyingError: error)
        }
    }

    /// The value sealed in `stored`, the stored form of encrypted field `field` of record
    /// `recordName`; a wrong key or damaged bytes throw, naming the field.
    func unseal(_ stored: FieldValue, field: String, recordName: String) throws(FogError) -> FieldValue {
        guard case .bytes(let sealed) = stored else {
            throw FogError(.internalError, message: "encrypted field '\(field)' of record \(recordName) is not sealed bytes")
        }
        let key = try currentKey(creating: false, field: field)
        let plain: Data
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            plain = try AES.GCM.open(box, using: key, authenticating: Self.authenticated(field))
        } catch {
            throw FogError(
                .badContainer,
                message:
                    "cannot decrypt field '\(field)' of record \(recordName): the encryption key is not the one it was saved with, or the value is damaged",
                underlyingError: error)
        }
        guard plain.count >= 2, plain[plain.startIndex] == Self.plaintextVersion,
            let type = FieldType(rawValue: plain[plain.startIndex + 1])
        else {
            throw FogError(.internalError, message: "encrypted field '\(field)' of record \(recordName) has an unknown layout")
        }
        do {
            return try plain.dropFirst(2).withUnsafeBytes { try RecordCodec.decodePayload($0, type: type) }
        } catch {
            throw FogError(
                .internalError, message: "encrypted field '\(field)' of record \(recordName) is damaged: \(error)", underlyingError: error)
        }
    }

    /// Decrypts, in place, the encrypted fields among `values` (stored names, sealed bytes).
    func openAll(_ values: inout [String: FieldValue], recordName: String) throws(FogError) {
        for (key, value) in values where Record.isEncryptedKey(key) {
            values[key] = try unseal(value, field: Record.plainKey(ofEncrypted: key), recordName: recordName)
        }
    }
}
