import FogStorage
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The asset files of a store and their reference counts: the `assets` table (stored name →
/// BE64 count of the record fields that hold it) and the files in `assets/`.
///
/// - A save copies each new asset into `assets/<sha256>` (``AssetFiles/store(_:key:into:limit:flush:)``)
///   before its transaction, holding the shared ``AssetLock`` from before the copy until the
///   transaction has ended. The transaction raises the counts of the names its records gain
///   and lowers those of the names they lose (``countSave(existing:values:changes:txn:)``,
///   ``release(_:txn:)``), and a count that reaches zero removes its key.
/// - After the transaction, ``collect()`` deletes the files whose names lost their last
///   reference (and the copies of saves that failed), holding the lock exclusively, so that no
///   save is between its copy and its commit; when the lock is taken, they wait for the next
///   collection or the next open.
/// - At open, ``sweep()`` deletes every file in `assets/` that has no count (the copies of saves
///   that crashed before committing, the files of records whose deletion committed just before
///   a crash) and every temporary file.
final class AssetStore<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    /// Stored name → number of references.
    let table: Table
    /// Names whose count may have reached zero, for the next ``collect()``.
    private let candidates = Mutex<Set<String>>([])

    init(core: EngineCore<Store>) {
        self.core = core
        table = core.store.table(named: Layout.assets)
    }

    // MARK: Counts (inside write transactions)

    /// Adds one reference per name in `added` and removes one per name in `removed`.
    func adjust(adding added: [String], removing removed: [String], txn: Store.WriteTransaction) throws {
        guard !added.isEmpty || !removed.isEmpty else { return }
        var delta: [String: Int64] = [:]
        for name in added { delta[name, default: 0] += 1 }
        for name in removed { delta[name, default: 0] -= 1 }
        var released: [String] = []
        for (name, change) in delta where change != 0 {
            let key = Layout.assetKey(name)
            let count = max(0, try txn.withValue(forKey: key, in: table) { try readBigEndianKey($0) } ?? 0)
            let next = count + change
            if next > 0 {
                try txn.put(bigEndianKey(next), forKey: key, in: table)
                // A store that keeps assets in the database stores the bytes with the first reference.
                if count == 0, let chunks = core.assetChunks {
                    try AssetChunks.store(name, from: assetDirectory.appendingPathComponent(name), into: chunks, txn: txn)
                }
            } else {
                if count > 0 {
                    try txn.delete(key, in: table)
                    if let chunks = core.assetChunks { try txn.deleteAll(in: chunks, range: .prefix(AssetChunks.prefix(name))) }
                }
                released.append(name)
            }
        }
        if !released.isEmpty { note(released) }
    }

    /// Counts the assets a save gains and loses: every asset of a new record's `values`; for
    /// an update of `existing`, the assets of the fields `changes` writes, old and new.
    func countSave(existing: EncodedRecord?, values: [String: FieldValue], changes: FieldChanges, txn: Store.WriteTransaction) throws {
        guard let existing else {
            try adjust(adding: AssetNames.of(values.values), removing: [], txn: txn)
            return
        }
        var removed: [String] = []
        for field in existing.fields where (field.type == .asset || field.type == .assetList) && changes.contains(field.name) {
            if let value = try existing.value(field.name) { removed += AssetNames.of(value) }
        }
        var added: [String] = []
        for (_, value) in changes.entries { if let value { added += AssetNames.of(value) } }
        try adjust(adding: added, removing: removed, txn: txn)
    }

    /// Removes the references of a record being deleted.
    func release(_ values: [String: FieldValue], txn: Store.WriteTransaction) throws {
        try adjust(adding: [], removing: AssetNames.of(values.values), txn: txn)
    }

    /// Removes the references of the encoded record at `row`, if any (a zone's deletion).
    func release(row: Int64, records: Table, txn: Store.WriteTransaction) throws {
        let names = try txn.withValue(forKey: bigEndianKey(row), in: records) { try AssetNames.of(encoded: $0) } ?? []
        try adjust(adding: [], removing: names, txn: txn)
    }

    /// Writes the count of every asset of every record (the migration to format version 4),
    /// record by record: nothing is gathered in memory.
    func recount(records: Table, txn: Store.WriteTransaction) throws {
        try txn.clear(table)
        try txn.scan(records) { _, value in
            for name in try AssetNames.of(encoded: value) {
                let key = Layout.assetKey(name)
                let count = try txn.withValue(forKey: key, in: table) { try readBigEndianKey($0) } ?? 0
                try txn.put(bigEndianKey(count + 1), forKey: key, in: table)
            }
            return true
        }
    }

    // MARK: Files (outside transactions)

    /// Whether names wait for a collection (one that found the asset lock taken deferred them).
    var hasPendingCollection: Bool { candidates.withLock { !$0.isEmpty } }

    /// Remembers names to check at the next ``collect()``.
    func note(_ names: some Sequence<String>) {
        candidates.withLock { $0.formUnion(names) }
    }

    /// Deletes the files of the noted names that have no reference, unless a save is between
    /// its copy and its commit (the names then wait for the next collection or open).
    func collect() {
        let names = candidates.withLock { set -> Set<String> in
            defer { set.removeAll() }
            return set
        }
        guard !names.isEmpty else { return }
        guard let lock = AssetLock.exclusiveIfFree(in: assetDirectory) else {
            note(names)
            return
        }
        defer { lock.release() }
        let unreferenced = try? core.read { txn, _ in
            try names.filter { name in try txn.withValue(forKey: Layout.assetKey(name), in: table) { _ in true } == nil }
        }
        for name in unreferenced ?? [] where AssetNames.isStoredName(name) {
            unlink(assetDirectory.appendingPathComponent(name).path)
        }
    }

    /// Deletes every file in `assets/` without a reference, and every temporary file; does
    /// nothing while a save (of this process or another) is between its copy and its commit.
    func sweep() throws {
        guard let lock = AssetLock.exclusiveIfFree(in: assetDirectory) else { return }
        defer { lock.release() }
        let entries = try FileManager.default.contentsOfDirectory(atPath: assetDirectory.path)
        try core.read { txn, _ in
            for name in entries {
                let referenced = try txn.withValue(forKey: Layout.assetKey(name), in: table) { _ in true } ?? false
                if name.hasPrefix(AssetFiles.temporaryPrefix) || !referenced { unlink(assetDirectory.appendingPathComponent(name).path) }
            }
        }
    }

    /// Whether the stored file `name` exists (a regular file).
    func hasFile(_ name: String) -> Bool {
        guard AssetNames.isStoredName(name) else { return false }
        var info = stat()
        return lstat(assetDirectory.appendingPathComponent(name).path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }
}

/// The stored names of the assets in field values and encoded records.
enum AssetNames {
    static func of(_ value: FieldValue) -> [String] {
        switch value {
        case .asset(let a): return a.storedName.map { [$0] } ?? []
        case .assetList(let list): return list.compactMap(\.storedName)
        default: return []
        }
    }

    static func of(_ values: some Sequence<FieldValue>) -> [String] {
        values.flatMap { of($0) }
    }

    /// The names of the assets of an encoded record; only its asset fields are decoded.
    static func of(encoded buffer: UnsafeRawBufferPointer) throws -> [String] {
        let view = try RecordView(buffer, checking: .all)
        var names: [String] = []
        try RecordView.forEachField(view.buffer, count: view.count, tableStart: view.tableStart, payloadStart: view.payloadStart) {
            _, type, payload in
            if type == .asset || type == .assetList { names += of(try RecordCodec.decodePayload(payload, type: type)) }
            return true
        }
        return names
    }

    /// Whether `name` can name a file of `assets/`: not empty, no separator, not hidden.
    static func isStoredName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && !name.hasPrefix(".")
    }
}

/// An advisory lock (`flock`) on `assets.lock`, beside `assets/` in the container's directory:
/// saves hold it shared from before their copies
/// until their transaction ends; collection holds it exclusively. Each lock opens the file
/// anew, so two locks of one process conflict as two processes' would.
final class AssetLock: Sendable {
    private let descriptor: Mutex<Int32>

    private init(descriptor: Int32) { self.descriptor = Mutex(descriptor) }

    /// Waits for the shared lock; `nil` when the lock file cannot be opened.
    static func shared(in directory: URL) -> AssetLock? {
        take(in: directory, LOCK_SH)
    }

    /// The exclusive lock if no one holds the lock; `nil` otherwise.
    static func exclusiveIfFree(in directory: URL) -> AssetLock? {
        take(in: directory, LOCK_EX | LOCK_NB)
    }

    private static func take(in directory: URL, _ operation: Int32) -> AssetLock? {
        let path = directory.deletingLastPathComponent().appendingPathComponent(AssetFiles.lockName).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        while flock(fd, operation) != 0 {
            if errno == EINTR { continue }
            close(fd)
            return nil
        }
        return AssetLock(descriptor: fd)
    }

    /// Releases the lock (once; later calls do nothing).
    func release() {
        descriptor.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    deinit { release() }
}
