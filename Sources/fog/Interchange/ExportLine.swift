import FogKit
import Foundation

/// One line of `fog export`'s output: a CloudKit Web Services record dictionary with its
/// zone ID, plus two FogKit keys that say where the record lives in the store, `database`
/// (`private` or `public`) and `user` (the owner's identity, for the private database).
/// Docs/ImportExport.md describes the format.
struct ExportLine: Codable {
    var record: WebServices.RecordDictionary
    var database: String?
    var user: String?
    /// A share's state (FogKit's key), on the line of a `cloudkit.share` record.
    var share: ShareLine?

    enum CodingKeys: String, CodingKey { case database, user, share }

    init(record: WebServices.RecordDictionary, database: String?, user: String?) {
        self.record = record
        self.database = database
        self.user = user
    }

    init(from decoder: any Decoder) throws {
        record = try WebServices.RecordDictionary(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        database = try c.decodeIfPresent(String.self, forKey: .database)
        user = try c.decodeIfPresent(String.self, forKey: .user)
        share = try c.decodeIfPresent(ShareLine.self, forKey: .share)
        if let database, !["private", "public"].contains(database) {
            throw WebServices.FormatError(field: "database", reason: "is \"\(database)\"; it must be private or public")
        }
    }

    func encode(to encoder: any Encoder) throws {
        try record.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(database, forKey: .database)
        try c.encodeIfPresent(user, forKey: .user)
        try c.encodeIfPresent(share, forKey: .share)
    }
}

/// A line of `fog export`'s output: a record, or a user and their directory entry.
enum InterchangeLine: Decodable {
    case record(ExportLine)
    case user(DirectoryLine)

    private enum Keys: String, CodingKey { case directoryEntry }

    init(from decoder: any Decoder) throws {
        if try decoder.container(keyedBy: Keys.self).contains(.directoryEntry) {
            self = .user(try DirectoryLine(from: decoder))
        } else {
            self = .record(try ExportLine(from: decoder))
        }
    }
}

/// Reads a file (or standard input) line by line in large chunks, never holding more
/// than a chunk and one line.
final class LineReader {
    private let handle: FileHandle
    private var buffer = Data()
    private var start = 0
    private var atEnd = false
    /// Bytes consumed so far (for progress).
    private(set) var bytesRead: Int64 = 0

    init(handle: FileHandle) { self.handle = handle }

    /// The next line without its newline, or `nil` at the end.
    func next() throws -> Data? {
        while true {
            let from = start
            let newline: Int? = buffer.withUnsafeBytes { raw in
                guard from < raw.count, let base = raw.baseAddress,
                    let hit = memchr(base + from, 0x0A, raw.count - from)
                else { return nil }
                return base.distance(to: UnsafeRawPointer(hit))
            }
            if let newline {
                let line = buffer.subdata(in: from..<newline)
                bytesRead += Int64(newline + 1 - from)
                start = newline + 1
                return line
            }
            if atEnd {
                guard from < buffer.count else { return nil }
                let line = buffer.subdata(in: from..<buffer.count)
                bytesRead += Int64(buffer.count - from)
                start = buffer.count
                return line
            }
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { atEnd = true }
            var next = Data(capacity: buffer.count - from + chunk.count)
            next.append(buffer.subdata(in: from..<buffer.count))
            next.append(chunk)
            buffer = next
            start = 0
        }
    }
}

/// Progress on standard error, only when it is a terminal: records, rate and, when the
/// total is known, the time left.
struct Progress {
    let enabled = isatty(STDERR_FILENO) == 1
    let started = Date()
    private var lastShown = Date.distantPast

    /// Shows `count` records done; `fraction` is the share of the input read, when known.
    mutating func show(_ count: Int, fraction: Double?, force: Bool = false) {
        guard enabled else { return }
        let now = Date()
        guard force || now.timeIntervalSince(lastShown) >= 0.25 else { return }
        lastShown = now
        let elapsed = max(now.timeIntervalSince(started), 0.001)
        let rate = Double(count) / elapsed
        var line = "\r\(count) records  \(Int(rate))/s  \(Self.clock(elapsed))"
        if let fraction, fraction > 0.01, fraction < 1 {
            line += "  \(Int(fraction * 100))%  \(Self.clock(elapsed / fraction - elapsed)) left"
        }
        FileHandle.standardError.write(Data((line + "\u{1B}[K").utf8))
    }

    /// Ends the progress line.
    func finish() {
        if enabled { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return String(format: "%d:%02d", s / 60, s % 60)
    }
}

extension Database.Scope {
    /// The scope named `private` or `public` (the databases export and import address).
    init?(exportName: String) {
        switch exportName {
        case "private": self = .private
        case "public": self = .public
        default: return nil
        }
    }
}
