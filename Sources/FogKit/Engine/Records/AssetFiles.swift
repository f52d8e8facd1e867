import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files behind assets: checking a caller's source file and copying it into `assets/`.
///
/// Only a regular file (or a symbolic link to one) is an asset source. A directory, a FIFO,
/// a device such as `/dev/null` or a socket is refused with `invalidArguments`; a missing or
/// unreadable file with `assetFileNotFound`. The copy opens the source without blocking and
/// checks the opened file again, so a source swapped for a FIFO after the check cannot hang
/// the save, and it copies bytes only, never a tree.
enum AssetFiles {
    /// Checks that the asset's source is a readable regular file, without opening it.
    static func checkSource(_ asset: Asset, key: String) throws(FogError) {
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
        guard access(url.path, R_OK) == 0 else {
            throw notFound(url, key: key, errno: errno)
        }
    }

    /// Copies the asset's source into `directory` under `name` and returns its size; on
    /// failure nothing is left in `directory`.
    static func copy(_ asset: Asset, key: String, into directory: URL, name: String, flush: Bool) throws(FogError) -> Int64 {
        guard let url = asset.fileURL else {
            throw FogError(.assetFileNotFound, message: "field '\(key)': the asset has no file URL")
        }
        let source = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard source >= 0 else { throw notFound(url, key: key, errno: errno) }
        defer { close(source) }
        var info = stat()
        guard fstat(source, &info) == 0 else { throw unavailable(url, key: key, errno: errno) }
        try checkRegular(info.st_mode, url, key: key)

        let destination = directory.appendingPathComponent(name)
        let target = open(destination.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard target >= 0 else {
            throw FogError(
                .assetNotAvailable, message: "field '\(key)': cannot create the asset's copy: \(String(cString: strerror(errno)))")
        }
        var failure: FogError?
        var size: Int64 = 0
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        copying: while true {
            let count = read(source, buffer, chunk)
            if count < 0 {
                if errno == EINTR { continue }
                failure = unavailable(url, key: key, errno: errno)
                break
            }
            if count == 0 { break }
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
        // Flush the copy and the folder entry naming it, so a durable commit never points
        // at a file the system has not written yet.
        if failure == nil, flush, fsync(target) != 0 {
            failure = FogError(
                .assetNotAvailable, message: "field '\(key)': cannot flush the asset's copy: \(String(cString: strerror(errno)))")
        }
        close(target)
        if let failure {
            unlink(destination.path)
            throw failure
        }
        if flush {
            let folder = open(directory.path, O_RDONLY | O_CLOEXEC)
            if folder >= 0 {
                _ = fsync(folder)
                close(folder)
            }
        }
        return size
    }

    /// Removes copies made for a save that then failed; a copy already gone is fine.
    static func remove(_ copies: [URL]) {
        for copy in copies { unlink(copy.path) }
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

    private static func notFound(_ url: URL, key: String, errno code: Int32) -> FogError {
        let reason = code == EACCES || code == EPERM ? "cannot be read" : "does not exist"
        return FogError(
            .assetFileNotFound, message: "field '\(key)': asset file \(url.path) \(reason) (\(String(cString: strerror(code))))")
    }

    private static func unavailable(_ url: URL, key: String, errno code: Int32) -> FogError {
        FogError(.assetNotAvailable, message: "field '\(key)': cannot read asset file \(url.path): \(String(cString: strerror(code)))")
    }
}
