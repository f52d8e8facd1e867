import FogStorage
import FogStorageLMDB
import Foundation

/// A read transaction of an ``OpenedStore``: LMDB's, called directly, or another backend's.
struct OpenedReadTransaction: StorageReadTransaction {
    enum Kind {
        case lmdb(LMDBReadTransaction)
        case other(ErasedRead)
    }

    let kind: Kind

    init(lmdb: LMDBReadTransaction) { kind = .lmdb(lmdb) }
    init(other: ErasedRead) { kind = .other(other) }

    var isReadOnly: Bool {
        switch kind {
        case .lmdb(let t): t.isReadOnly
        case .other(let t): t.txn.isReadOnly
        }
    }

    var snapshotID: UInt64? {
        switch kind {
        case .lmdb(let t): t.snapshotID
        case .other(let t): t.txn.snapshotID
        }
    }

    @inline(__always)
    func withValue<R>(forKey key: [UInt8], in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        switch kind {
        case .lmdb(let t): try t.withValue(forKey: key, in: table, body)
        case .other(let t): try t.txn.withValue(forKey: key, in: table, body)
        }
    }

    @inline(__always)
    func withValue<R>(forKey key: UnsafeRawBufferPointer, in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        switch kind {
        case .lmdb(let t): try t.withValue(forKey: key, in: table, body)
        case .other(let t): try t.txn.withValue(forKey: key, in: table, body)
        }
    }

    func value(forKey key: [UInt8], in table: Table) throws -> [UInt8]? {
        switch kind {
        case .lmdb(let t): try t.value(forKey: key, in: table)
        case .other(let t): try t.txn.value(forKey: key, in: table)
        }
    }

    func contains(_ key: [UInt8], in table: Table) throws -> Bool {
        switch kind {
        case .lmdb(let t): try t.contains(key, in: table)
        case .other(let t): try t.txn.contains(key, in: table)
        }
    }

    @inline(__always)
    func scan(
        _ table: Table, range: ScanRange, reverse: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        switch kind {
        case .lmdb(let t): try t.scan(table, range: range, reverse: reverse, body)
        case .other(let t): try t.txn.scan(table, range: range, reverse: reverse, body)
        }
    }

    func scan(
        _ table: Table, range: ScanRange, reverse: Bool, after position: (key: [UInt8], value: [UInt8]),
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        switch kind {
        case .lmdb(let t): try t.scan(table, range: range, reverse: reverse, after: position, body)
        case .other(let t): try t.txn.scan(table, range: range, reverse: reverse, after: position, body)
        }
    }

    func valueCount(forKey key: [UInt8], in table: Table) throws -> Int {
        switch kind {
        case .lmdb(let t): try t.valueCount(forKey: key, in: table)
        case .other(let t): try t.txn.valueCount(forKey: key, in: table)
        }
    }

    func count(of table: Table) throws -> Int {
        switch kind {
        case .lmdb(let t): try t.count(of: table)
        case .other(let t): try t.txn.count(of: table)
        }
    }

    func layout(of table: Table) throws -> TableLayout {
        switch kind {
        case .lmdb(let t): try t.layout(of: table)
        case .other(let t): try t.txn.layout(of: table)
        }
    }
}

/// A write transaction of an ``OpenedStore``.
struct OpenedWriteTransaction: StorageWriteTransaction {
    enum Kind {
        case lmdb(LMDBWriteTransaction)
        case other(ErasedWrite)
    }

    let kind: Kind
    /// This transaction as a read transaction (which sees its writes).
    let readView: OpenedReadTransaction

    init(lmdb: LMDBWriteTransaction) {
        kind = .lmdb(lmdb)
        readView = OpenedReadTransaction(lmdb: lmdb)
    }

    init(other: ErasedWrite) {
        kind = .other(other)
        readView = OpenedReadTransaction(other: other.readView)
    }

    var isReadOnly: Bool { false }

    @inline(__always)
    func withValue<R>(forKey key: [UInt8], in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try readView.withValue(forKey: key, in: table, body)
    }

    @inline(__always)
    func withValue<R>(forKey key: UnsafeRawBufferPointer, in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try readView.withValue(forKey: key, in: table, body)
    }

    func value(forKey key: [UInt8], in table: Table) throws -> [UInt8]? { try readView.value(forKey: key, in: table) }

    func contains(_ key: [UInt8], in table: Table) throws -> Bool { try readView.contains(key, in: table) }

    func scan(
        _ table: Table, range: ScanRange, reverse: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try readView.scan(table, range: range, reverse: reverse, body)
    }

    func scan(
        _ table: Table, range: ScanRange, reverse: Bool, after position: (key: [UInt8], value: [UInt8]),
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try readView.scan(table, range: range, reverse: reverse, after: position, body)
    }

    func valueCount(forKey key: [UInt8], in table: Table) throws -> Int { try readView.valueCount(forKey: key, in: table) }

    func count(of table: Table) throws -> Int { try readView.count(of: table) }

    func layout(of table: Table) throws -> TableLayout { try readView.layout(of: table) }

    func put(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws {
        switch kind {
        case .lmdb(let t): try t.put(value, forKey: key, in: table)
        case .other(let t): try t.txn.put(value, forKey: key, in: table)
        }
    }

    func put(
        count: Int, forKey key: [UInt8], in table: Table, append: Bool, _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws {
        switch kind {
        case .lmdb(let t): try t.put(count: count, forKey: key, in: table, append: append, fill)
        case .other(let t): try t.txn.put(count: count, forKey: key, in: table, append: append, fill)
        }
    }

    @discardableResult
    func insert(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws -> Bool {
        switch kind {
        case .lmdb(let t): try t.insert(value, forKey: key, in: table)
        case .other(let t): try t.txn.insert(value, forKey: key, in: table)
        }
    }

    @discardableResult
    func delete(_ key: [UInt8], in table: Table) throws -> Bool {
        switch kind {
        case .lmdb(let t): try t.delete(key, in: table)
        case .other(let t): try t.txn.delete(key, in: table)
        }
    }

    @discardableResult
    func deleteAll(in table: Table, range: ScanRange) throws -> Int {
        switch kind {
        case .lmdb(let t): try t.deleteAll(in: table, range: range)
        case .other(let t): try t.txn.deleteAll(in: table, range: range)
        }
    }

    @discardableResult
    func scanRemoving(
        _ table: Table, range: ScanRange,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> ScanRemoval
    ) throws -> Int {
        switch kind {
        case .lmdb(let t): try t.scanRemoving(table, range: range, body)
        case .other(let t): try t.txn.scanRemoving(table, range: range, body)
        }
    }

    func clear(_ table: Table) throws {
        switch kind {
        case .lmdb(let t): try t.clear(table)
        case .other(let t): try t.txn.clear(table)
        }
    }

    @discardableResult
    func addValue(_ value: [UInt8], forKey key: [UInt8], in table: Table, appending: Bool) throws -> Bool {
        switch kind {
        case .lmdb(let t): try t.addValue(value, forKey: key, in: table, appending: appending)
        case .other(let t): try t.txn.addValue(value, forKey: key, in: table, appending: appending)
        }
    }

    func appendValue(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws {
        switch kind {
        case .lmdb(let t): try t.appendValue(value, forKey: key, in: table)
        case .other(let t): try t.txn.appendValue(value, forKey: key, in: table)
        }
    }

    @discardableResult
    func removeValue(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws -> Bool {
        switch kind {
        case .lmdb(let t): try t.removeValue(value, forKey: key, in: table)
        case .other(let t): try t.txn.removeValue(value, forKey: key, in: table)
        }
    }

    func replaceWithEmpty(_ table: Table) throws {
        switch kind {
        case .lmdb(let t): try t.replaceWithEmpty(table)
        case .other(let t): try t.txn.replaceWithEmpty(table)
        }
    }

    func writeBeforeCommit(key: [UInt8], _ work: @escaping (OpenedWriteTransaction) throws -> Void) {
        switch kind {
        case .lmdb(let t): t.writeBeforeCommit(key: key) { try work(OpenedWriteTransaction(lmdb: $0)) }
        case .other(let t): t.txn.writeBeforeCommit(key: key) { try work(OpenedWriteTransaction(other: ErasedWrite($0))) }
        }
    }

    func runWritesBeforeCommit() throws {
        switch kind {
        case .lmdb(let t): try t.runWritesBeforeCommit()
        case .other(let t): try t.txn.runWritesBeforeCommit()
        }
    }
}
