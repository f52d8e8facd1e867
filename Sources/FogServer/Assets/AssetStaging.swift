import Crypto
import FogKit
import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// The folder uploads wait in until a record saves them: `<store>/server-uploads/`.
///
/// An upload streams into `incoming-<uuid>` (never more than its limit), is then named
/// `<sha256>-<random>.upload` (for multipart bodies, after its `files` part is cut out), and
/// its receipt names that file. ``sweep(now:grace:)`` deletes abandoned incoming files,
/// uploads whose receipts expired, and uploads whose bytes the store already holds (a
/// record saved them); a receipt whose staged file was swept reads the store's copy.
final class AssetStaging: Sendable {
    let folder: URL
    let storeDirectory: URL
    private let lastSweep = Mutex<Date>(.distantPast)

    /// How long a saved upload is kept after its bytes reached the store (a save between
    /// reading the receipt and copying the file must still find it).
    static let savedGrace: TimeInterval = 120

    init(storeDirectory: URL) {
        self.storeDirectory = storeDirectory
        folder = storeDirectory.appendingPathComponent("server-uploads", isDirectory: true)
    }

    /// A staged upload: its file name in the folder, SHA-256 (hexadecimal) and size.
    struct Staged: Equatable {
        var name: String
        var sha256: String
        var size: Int64
    }

    // MARK: Receiving

    /// Streams `body` into a new incoming file; more than `limit` bytes fail with
    /// `BAD_REQUEST` and leave nothing behind.
    func receive(_ body: RequestBody, limit: Int) async throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("incoming-" + UUID().uuidString.lowercased())
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ServerError(.internalError, "cannot stage the upload: \(String(cString: strerror(errno)))") }
        var closed = false
        do {
            var total = 0
            for try await buffer in body {
                total += buffer.readableBytes
                guard total <= limit else {
                    throw ServerError(.badRequest, "the upload is larger than the store's maximum asset size (\(limit) bytes)")
                }
                try buffer.withUnsafeReadableBytes { bytes in
                    var written = 0
                    while written < bytes.count {
                        let n = write(fd, bytes.baseAddress! + written, bytes.count - written)
                        if n < 0 {
                            if errno == EINTR { continue }
                            throw ServerError(.internalError, "cannot stage the upload: \(String(cString: strerror(errno)))")
                        }
                        written += n
                    }
                }
            }
            closed = true
            guard close(fd) == 0 else { throw ServerError(.internalError, "cannot stage the upload") }
            return url
        } catch {
            if !closed { close(fd) }
            try? FileManager.default.removeItem(at: url)
            throw error
        }
    }

    /// Names the incoming file `incoming` (a raw body) as a staged upload.
    func stageRaw(_ incoming: URL) throws -> Staged {
        defer { try? FileManager.default.removeItem(at: incoming) }
        let (sha, size) = try Self.digest(of: incoming)
        let name = "\(sha)-\(SecureBytes.hex(8)).upload"
        try FileManager.default.moveItem(at: incoming, to: folder.appendingPathComponent(name))
        return Staged(name: name, sha256: sha, size: size)
    }

    /// Cuts the file part out of the multipart/form-data body in `incoming` (the part named
    /// `files`, else the first part with a file name) and stages it; at most `limit` bytes.
    func stageMultipart(_ incoming: URL, boundary: String, limit: Int) throws -> Staged {
        defer { try? FileManager.default.removeItem(at: incoming) }
        let data = try Data(contentsOf: incoming, options: .alwaysMapped)
        guard let part = MultipartBody.filePart(in: data, boundary: boundary) else {
            throw ServerError(.badRequest, "the multipart body has no part named files")
        }
        guard part.count <= limit else {
            throw ServerError(.badRequest, "the upload is larger than the store's maximum asset size (\(limit) bytes)")
        }
        let temporary = folder.appendingPathComponent("incoming-" + UUID().uuidString.lowercased())
        try data[part].write(to: temporary)
        return try stageRaw(temporary)
    }

    static func digest(of url: URL) throws -> (sha256: String, size: Int64) {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        var size: Int64 = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
            size += Int64(chunk.count)
        }
        return (hasher.finalize().map { String(format: "%02x", $0) }.joined(), size)
    }

    // MARK: Receipts

    /// The file a receipt's bytes are in: its staged upload, or the store's copy of the same
    /// bytes in `environment`; `nil` when neither is left.
    func file(for receipt: AssetLinks.Receipt, environment: Container.Environment) -> URL? {
        if let staged = receipt.staged, !staged.contains("/"), staged.hasSuffix(".upload") {
            let url = folder.appendingPathComponent(staged)
            if FileManager.default.fileExists(atPath: url.path) { return url }
        }
        guard receipt.sha256.count == 64, receipt.sha256.allSatisfy(\.isHexDigit) else { return nil }
        let stored = assetFolder(environment).appendingPathComponent(receipt.sha256)
        return FileManager.default.fileExists(atPath: stored.path) ? stored : nil
    }

    func assetFolder(_ environment: Container.Environment) -> URL {
        let root = environment == .production ? storeDirectory.appendingPathComponent("production", isDirectory: true) : storeDirectory
        return root.appendingPathComponent("assets", isDirectory: true)
    }

    // MARK: Cleaning

    /// Sweeps at most once a minute.
    func sweepIfDue(now: Date = Date()) {
        let due = lastSweep.withLock { last -> Bool in
            guard now.timeIntervalSince(last) >= 60 else { return false }
            last = now
            return true
        }
        if due { sweep(now: now, grace: Self.savedGrace) }
    }

    /// Deletes incoming files older than an upload URL lasts, staged uploads older than a
    /// receipt lasts, and staged uploads older than `grace` whose bytes the store holds.
    func sweep(now: Date, grace: TimeInterval) {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: folder.path) else { return }
        let stored = [Container.Environment.development, .production].map(assetFolder)
        for name in names {
            let url = folder.appendingPathComponent(name)
            guard let modified = (try? manager.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date else { continue }
            let age = now.timeIntervalSince(modified)
            var remove = false
            if name.hasPrefix("incoming-") {
                remove = age > AssetLinks.uploadLifetime
            } else if name.hasSuffix(".upload") {
                let sha = String(name.prefix(64))
                remove =
                    age > AssetLinks.receiptLifetime
                    || (age > grace && stored.contains { manager.fileExists(atPath: $0.appendingPathComponent(sha).path) })
            }
            if remove { try? manager.removeItem(at: url) }
        }
    }
}
