import FogStorage
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of the assets of a store that keeps them in the database (one on a database
/// server, shared by many processes and machines): the `assetChunks` table, stored name,
/// a zero byte and a BE32 chunk number → at most ``chunkSize`` bytes.
///
/// The chunks are written in the transaction that gives an asset its first reference and
/// deleted in the one that removes its last (``AssetStore/adjust(adding:removing:txn:)``),
/// so they always agree with the counts. A process keeps the files callers read in its
/// working folder (``StoreLocation/workingDirectory``): a save copies the asset there first,
/// as into a local store's `assets/`, and a fetched asset's file is written there from the
/// chunks the first time ``Asset/fileURL`` is read (``RemoteAssets``). Files and chunks are
/// streamed a chunk at a time, never held whole in memory.
enum AssetChunks {
    /// The bytes of one chunk (the last may be shorter).
    static let chunkSize = 256 * 1024

    /// The key of chunk `index` of the asset `name`.
    static func key(_ name: String, _ index: UInt32) -> [UInt8] {
        var key = prefix(name)
        withUnsafeBytes(of: index.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    /// The keys of every chunk of `name`.
    static func prefix(_ name: String) -> [UInt8] { Array(name.utf8) + [0] }

    /// Writes the file `file` as the chunks of `name`, replacing any.
    static func store<T: StorageWriteTransaction>(_ name: String, from file: URL, into table: Table, txn: T) throws {
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw FogError(.assetFileNotFound, message: "asset \(name): its file \(file.path) is gone before its bytes were stored")
        }
        defer { close(fd) }
        try txn.deleteAll(in: table, range: .prefix(prefix(name)))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var index: UInt32 = 0
        while true {
            var filled = 0
            while filled < chunkSize {
                let n = read(fd, buffer.baseAddress! + filled, chunkSize - filled)
                if n < 0, errno == EINTR { continue }
                guard n >= 0 else {
                    throw FogError(
                        .assetNotAvailable, message: "asset \(name): cannot read \(file.path): \(String(cString: strerror(errno)))")
                }
                if n == 0 { break }
                filled += n
            }
            if filled == 0 && index > 0 { break }
            try txn.put(count: filled, forKey: key(name, index), in: table) { target in
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[0..<filled]))
            }
            index += 1
            if filled < chunkSize { break }
        }
    }

    /// Writes the chunks of `name` to the file `destination` (through a temporary file renamed
    /// into place). Returns `false` when the store holds no chunks of `name`.
    static func materialize<T: StorageReadTransaction>(_ name: String, to destination: URL, from table: Table, txn: T) throws -> Bool {
        let temporary = destination.deletingLastPathComponent()
            .appendingPathComponent(AssetFiles.temporaryPrefix + UUID().uuidString.lowercased())
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FogError(.assetNotAvailable, message: "cannot create \(temporary.path): errno \(errno)") }
        var complete = false
        defer {
            close(fd)
            if !complete { unlink(temporary.path) }
        }
        var index: UInt32 = 0
        while true {
            let found = try txn.withValue(forKey: key(name, index), in: table) { bytes -> Bool in
                var written = 0
                while written < bytes.count {
                    let n = write(fd, bytes.baseAddress! + written, bytes.count - written)
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else { throw FogError(.assetNotAvailable, message: "cannot write \(temporary.path): errno \(errno)") }
                    written += n
                }
                return true
            }
            guard found == true else { break }
            index += 1
        }
        if index == 0 { return false }
        guard rename(temporary.path, destination.path) == 0 else {
            throw FogError(.assetNotAvailable, message: "cannot name \(destination.path): errno \(errno)")
        }
        complete = true
        return true
    }
}

/// The stores of this process that keep their assets in the database, by the folder their
/// assets' files are read from: how ``Asset/fileURL`` finds the bytes of a fetched asset whose
/// file this process has not written yet.
enum RemoteAssets {
    /// Writes the asset `name` to the given file; `false` when the store does not hold it.
    typealias Fetch = @Sendable (_ name: String, _ destination: URL) throws -> Bool

    private struct Source {
        let token: UInt64
        let fetch: Fetch
    }

    private static let sources = Mutex<[String: [Source]]>([:])
    private static let nextToken = Atomic<UInt64>(1)
    /// Whether any store is registered (so that local stores skip the lookup).
    private static let active = Atomic<Int>(0)

    /// Registers `fetch` for the assets in `directory`; returns the token that unregisters it.
    static func register(directory: URL, _ fetch: @escaping Fetch) -> UInt64 {
        let token = nextToken.wrappingAdd(1, ordering: .relaxed).oldValue
        sources.withLock { $0[directory.path, default: []].append(Source(token: token, fetch: fetch)) }
        active.wrappingAdd(1, ordering: .relaxed)
        return token
    }

    /// Removes the registration `token` of `directory`.
    static func unregister(directory: URL, token: UInt64) {
        let removed = sources.withLock { sources -> Bool in
            guard var list = sources[directory.path], let i = list.firstIndex(where: { $0.token == token }) else { return false }
            list.remove(at: i)
            sources[directory.path] = list.isEmpty ? nil : list
            return true
        }
        if removed { active.wrappingSubtract(1, ordering: .relaxed) }
    }

    /// Makes sure the file `directory/name` exists, writing it from its store when one is
    /// registered for `directory` (failures leave it missing; reading the file then fails).
    static func materializeIfNeeded(_ name: String, in directory: URL) {
        guard active.load(ordering: .relaxed) > 0 else { return }
        let file = directory.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: file.path) { return }
        guard let fetch = sources.withLock({ $0[directory.path]?.last?.fetch }) else { return }
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        _ = try? fetch(name, file)
    }
}
