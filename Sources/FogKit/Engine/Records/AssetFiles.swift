import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files behind assets: checking a caller's source file and copying it into `assets/`
/// under the SHA-256 of its bytes (``AssetStore`` counts the references to each file and
/// collects the unreferenced ones).
///
/// Only a regular file (or a symbolic link to one) is an asset source. A directory, a FIFO,
/// a device such as `/dev/null` or a socket is refused with `invalidArguments`; a missing or
/// unreadable file with `assetFileNotFound`. The copy opens the source without blocking and
/// checks the opened file again, so a source swapped for a FIFO after the check cannot hang
/// the save, and it copies bytes only, never a tree. A file whose size changes while it is
/// copied fails with `assetFileModified`.
enum AssetFiles {
    /// Checks that the asset's source is a readable regular file of at most `limit` bytes,
    /// without opening it.
    static func checkSource(_ asset: Asset, key: String, limit: Int) throws(FogError) {
        guard let url = asset.fileURL else {
            throw FogError(.assetFileNotFound, message: "field '\(key)': the asset has no file URL")
        }
        guard url.isFileURL else {
            throw FogError(.invalidArguments, message: "field '\(key)': asset URL \(url) is not a file URL")
        }
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            let code = errno
            throw notFound(url, key: key, errno: code)
        }
        try checkRegular(info.st_mode, url, key: key)
        try checkSize(Int64(info.st_size), url, key: key, limit: limit)
        guard access(url.path, R_OK) == 0 else {
            throw notFound(url, key: key, errno: errno)
        }
    }

    /// The prefix of the temporary files a copy is written to before it takes its content's
    /// name; the sweep at open removes any such file a crash left behind.
    static let temporaryPrefix = ".tmp-"
    /// The lock file, in the container's directory beside `assets/`, that keeps collection
    /// away from saves in flight (``AssetLock``).
    static let lockName = "assets.lock"
    /// The size of the chunks a copy reads, hashes and writes.
    static let chunkSize = 1 << 20

    /// Copies the asset's source into `directory`, hashing it while streaming it in
    /// ``chunkSize`` chunks, and names the copy by its content: the lowercase hexadecimal
    /// SHA-256 of its bytes. Returns that name and the size.
    ///
    /// The bytes go to a temporary file first, which is flushed (with `flush`) and then
    /// renamed to its content's name, and the folder is flushed: the name never points at
    /// bytes the system has not written. When a file of that name already exists (identical
    /// content), the temporary file is removed and the existing one is kept. A source larger
    /// than `limit` bytes fails with `limitExceeded` before anything is copied, and one that
    /// grows past it while it is copied stops the copy. On failure nothing of this copy is
    /// left in `directory`.
    static func store(
        _ asset: Asset, key: String, into directory: URL, limit: Int, flush: Bool
    ) throws(FogError) -> (name: String, size: Int64) {
        guard let url = asset.fileURL else {
            throw FogError(.assetFileNotFound, message: "field '\(key)': the asset has no file URL")
        }
        let source = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard source >= 0 else { throw notFound(url, key: key, errno: errno) }
        defer { close(source) }
        var info = stat()
        guard fstat(source, &info) == 0 else { throw unavailable(url, key: key, errno: errno) }
        try checkRegular(info.st_mode, url, key: key)
        try checkSize(Int64(info.st_size), url, key: key, limit: limit)

        let temporary = directory.appendingPathComponent(temporaryPrefix + UUID().uuidString.lowercased())
        let target = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard target >= 0 else {
            throw FogError(
                .assetNotAvailable, message: "field '\(key)': cannot create the asset's copy: \(String(cString: strerror(errno)))")
        }
        var failure: FogError?
        var size: Int64 = 0
        var hasher = SHA256()
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 16)
        copying: while true {
            let count = read(source, buffer, chunkSize)
            if count < 0 {
                if errno == EINTR { continue }
                failure = unavailable(url, key: key, errno: errno)
                break
            }
            if count == 0 { break }
            if size + Int64(count) > Int64(limit) {
                // The file grew past the limit since it was measured: stop before writing more.
                failure = tooLarge(url, key: key, size: "more than \(limit) bytes (it grew while it was copied)", limit: limit)
                break
            }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(start: buffer, count: count))
            var written = 0
            while written < count {
                let n = write(target, buffer + written, count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = FogError(
                        .assetNotAvailable, message: "field '\(key)': cannot write the asset's copy: \(String(cString: strerror(errno)))")
                    break copying
                }
                written += n
            }
            size += Int64(count)
        }
        buffer.deallocate()
        // The file must hold what it held when the copy began: a file written to while it was
        // copied (its size when opened, the bytes read and its size now disagree) is
        // `assetFileModified`, CloudKit's "asset file changed during upload", which the app
        // retries once the file is stable. The partial copy is removed.
        if failure == nil {
            var after = stat()
            if fstat(source, &after) != 0 || Int64(after.st_size) != size || Int64(info.st_size) != size {
                failure = FogError(
                    .assetFileModified,
                    message:
                        "field '\(key)': asset file \(url.path) changed while it was copied (\(info.st_size) bytes when opened, \(size) read, \(after.st_size) now); save the record again"
                )
            }
        }
        // Flush the copy before it takes its name, so a name never points at unwritten bytes.
        if failure == nil, flush, fsync(target) != 0 {
            failure = FogError(
                .assetNotAvailable, message: "field '\(key)': cannot flush the asset's copy: \(String(cString: strerror(errno)))")
        }
        close(target)
        if let failure {
            unlink(temporary.path)
            throw failure
        }
        let name = hexadecimal(hasher.finalize())
        let destination = directory.appendingPathComponent(name)
        var existing = stat()
        if lstat(destination.path, &existing) == 0, existing.st_mode & S_IFMT == S_IFREG, existing.st_size == off_t(size) {
            // Stored already (identical content): keep that file.
            unlink(temporary.path)
        } else if rename(temporary.path, destination.path) != 0 {
            let code = errno
            unlink(temporary.path)
            throw FogError(
                .assetNotAvailable, message: "field '\(key)': cannot name the asset's copy: \(String(cString: strerror(code)))")
        }
        // Flush the folder entry naming it, so a durable commit never points at a name the
        // system has not written yet.
        if flush { flushFolder(directory) }
        return (name, size)
    }

    /// Flushes a folder's entries (`fsync` of the folder).
    static func flushFolder(_ directory: URL) {
        let folder = open(directory.path, O_RDONLY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }

    /// The lowercase hexadecimal form of a digest.
    static func hexadecimal(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        for byte in digest {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func checkRegular(_ mode: mode_t, _ url: URL, key: String) throws(FogError) {
        let kind = mode & S_IFMT
        guard kind == S_IFREG else {
            let what: String
            switch kind {
            case S_IFDIR: what = "a directory"
            case S_IFIFO: what = "a FIFO"
            case S_IFCHR: what = "a character device"
            case S_IFBLK: what = "a block device"
            case S_IFSOCK: what = "a socket"
            default: what = "not a regular file"
            }
            throw FogError(
                .invalidArguments, message: "field '\(key)': asset file \(url.path) is \(what); an asset's source must be a regular file")
        }
    }

    private static func checkSize(_ size: Int64, _ url: URL, key: String, limit: Int) throws(FogError) {
        guard size <= Int64(limit) else { throw tooLarge(url, key: key, size: "\(size) bytes", limit: limit) }
    }

    private static func tooLarge(_ url: URL, key: String, size: String, limit: Int) -> FogError {
        FogError(
            .limitExceeded,
            message: "field '\(key)': asset file \(url.path) is \(size); the limit is \(limit) bytes (maximumAssetSize)")
    }

    private static func notFound(_ url: URL, key: String, errno code: Int32) -> FogError {
        let reason = code == EACCES || code == EPERM ? "cannot be read" : "does not exist"
        return FogError(
            .assetFileNotFound, message: "field '\(key)': asset file \(url.path) \(reason) (\(String(cString: strerror(code))))")
    }

    private static func unavailable(_ url: URL, key: String, errno code: Int32) -> FogError {
        FogError(.assetNotAvailable, message: "field '\(key)': cannot read asset file \(url.path): \(String(cString: strerror(code)))")
    }
}
