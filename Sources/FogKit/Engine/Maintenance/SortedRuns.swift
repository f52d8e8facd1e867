import Foundation
import HeapModule

/// An external sort of (key, row) pairs in bounded memory, for the index rebuild of a
/// format migration: pairs are gathered in chunks, each chunk is sorted and written to a
/// **run** file of its own, and ``merge(_:)`` reads the runs back together in (key, row)
/// order. Memory holds one chunk while gathering, and one read buffer per run while merging.
///
/// The run files live in a scratch folder of the store's directory (a store's disk is
/// where there is room for a copy of its entries, and `/tmp` may be memory), which the
/// sorter removes when it is done and ``removeLeftovers(in:)`` removes after a crash.
final class SortedRuns {
    typealias Entry = (key: [UInt8], row: Int64)

    /// The scratch folder names start with this.
    static let folderPrefix = ".fogkit-migration-"
    /// The most read buffer, in bytes, all runs together, while merging (each run gets at
    /// least 4 KiB and at most 64 KiB of it).
    static let mergeBufferBudget = 8 << 20

    private let folder: URL
    private let chunkSize: Int
    private var chunk: [Entry] = []
    private var runs: [URL] = []

    /// - Parameters:
    ///   - directory: The store's directory, which gets the scratch folder.
    ///   - chunkSize: The most pairs held in memory while gathering.
    init(directory: URL, chunkSize: Int) {
        folder = directory.appendingPathComponent(Self.folderPrefix + UUID().uuidString, isDirectory: true)
        self.chunkSize = chunkSize
        chunk.reserveCapacity(chunkSize)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// Removes the scratch folders a crash mid-migration left in `directory`.
    static func removeLeftovers(in directory: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(folderPrefix) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        a.key == b.key ? a.row < b.row : a.key.lexicographicallyPrecedes(b.key)
    }

    /// Adds a pair; a full chunk goes to a run file.
    func append(_ key: [UInt8], row: Int64) throws {
        chunk.append((key, row))
        if chunk.count >= chunkSize { try spill() }
    }

    /// Writes the chunk, sorted, to a new run file: varint key length, key, row (BE64).
    private func spill() throws {
        chunk.sort(by: Self.precedes)
        if runs.isEmpty { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let url = folder.appendingPathComponent("run-\(runs.count)")
        var w = ByteWriter(capacity: chunk.count * 32)
        for entry in chunk {
            w.varint(entry.key.count)
            w.bytes.append(contentsOf: entry.key)
            withUnsafeBytes(of: UInt64(bitPattern: entry.row).bigEndian) { w.bytes.append(contentsOf: $0) }
        }
        guard FileManager.default.createFile(atPath: url.path, contents: Data(w.bytes)) else {
            throw FogError(.internalError, message: "could not write the migration's scratch file \(url.path)")
        }
        runs.append(url)
        chunk.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with every pair in (key, row) order: straight from memory when they fit
    /// in one chunk, otherwise merged from the run files.
    func merge(_ body: (_ key: [UInt8], _ row: Int64) throws -> Void) throws {
        chunk.sort(by: Self.precedes)
        guard !runs.isEmpty else {
            for entry in chunk { try body(entry.key, entry.row) }
            return
        }
        if !chunk.isEmpty { try spill() }
        chunk = []
        let bufferSize = min(64 << 10, max(4 << 10, Self.mergeBufferBudget / runs.count))
        var readers = try runs.map { try RunReader(url: $0, bufferSize: bufferSize) }
        var heap = Heap<Head>()
        for i in readers.indices {
            if let entry = try readers[i].next() { heap.insert(Head(key: entry.key, row: entry.row, run: i)) }
        }
        while let head = heap.popMin() {
            try body(head.key, head.row)
            if let entry = try readers[head.run].next() { heap.insert(Head(key: entry.key, row: entry.row, run: head.run)) }
        }
    }

    private struct Head: Comparable {
        let key: [UInt8]
        let row: Int64
        let run: Int

        static func < (a: Head, b: Head) -> Bool {
            a.key == b.key ? a.row < b.row : a.key.lexicographicallyPrecedes(b.key)
        }
        static func == (a: Head, b: Head) -> Bool { a.key == b.key && a.row == b.row }
    }

    /// Reads a run file's pairs in order through a buffer of bounded size.
    private struct RunReader {
        let handle: FileHandle
        let bufferSize: Int
        var buffer: [UInt8] = []
        var position = 0
        var atEnd = false

        init(url: URL, bufferSize: Int) throws {
            handle = try FileHandle(forReadingFrom: url)
            self.bufferSize = bufferSize
        }

        /// Makes at least `count` unread bytes available, unless the file ends first.
        private mutating func fill(_ count: Int) throws -> Bool {
            while buffer.count - position < count {
                if atEnd { return false }
                buffer.removeFirst(position)
                position = 0
                let data = try handle.read(upToCount: max(bufferSize, count)) ?? Data()
                if data.isEmpty {
                    atEnd = true
                    try handle.close()
                } else {
                    buffer.append(contentsOf: data)
                }
            }
            return true
        }

        mutating func next() throws -> Entry? {
            var length = 0
            var shift = 0
            while true {
                guard try fill(1) else {
                    if shift == 0 { return nil }
                    throw FogError(.internalError, message: "a migration scratch file ends inside an entry")
                }
                let byte = buffer[position]
                position += 1
                length |= Int(byte & 0x7F) << shift
                if byte < 0x80 { break }
                shift += 7
                guard shift < 64 else { throw FogError(.internalError, message: "a migration scratch file holds a bad length") }
            }
            guard try fill(length + 8) else { throw FogError(.internalError, message: "a migration scratch file ends inside an entry") }
            let key = Array(buffer[position..<position + length])
            position += length
            var row: UInt64 = 0
            for byte in buffer[position..<position + 8] { row = row << 8 | UInt64(byte) }
            position += 8
            return (key, Int64(bitPattern: row))
        }
    }
}
