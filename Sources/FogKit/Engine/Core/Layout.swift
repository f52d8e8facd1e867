import FogStorage
import Foundation

/// The on-disk layout: the tables of a container's store and their keys.
/// `Docs/OnDiskFormat.md` describes every table; change both together.
enum Layout {
    /// The format version written in `meta`; a store with another version is refused.
    static let formatVersion: Int64 = 7
    /// The versions this FogKit opens; older ones are migrated when opened (see
    /// `Engine.migrate(from:)`).
    static let readableFormatVersions: ClosedRange<Int64> = 1...7

    static let meta = "meta"
    static let zones = "zones"
    static let zoneIDs = "zoneids"
    static let names = "names"
    static let records = "records"
    static let schema = "schema"
    static let users = "users"
    static let refs = "refs"
    static let indexes = "indexes"
    static let changes = "changes"
    static let databaseChanges = "dbchanges"
    /// Asset reference counts (from version 4).
    static let assets = "assets"

    static let allTables = [
        meta, zones, zoneIDs, names, records, schema, users, refs, indexes, changes, databaseChanges, assets, subscriptions, notifications,
    ]
    /// The tables of format versions 4 and 5, which had no `subscriptions` and `notifications`.
    static let tablesBeforeVersion6 = allTables.filter { $0 != subscriptions && $0 != notifications }
    /// The tables of format versions 1 to 3, which had no `assets` either.
    static let tablesBeforeVersion4 = tablesBeforeVersion6.filter { $0 != assets }

    /// `indexes` holds a key's rows as a sorted set of 8-byte values (from version 3).
    static let indexTableLayout: TableLayout = .multiValue(fixedSizeValues: true)
    static let tableLayouts: [String: TableLayout] = [indexes: indexTableLayout]

    /// The store configuration of a container.
    static func configuration(
        durability: StorageDurability = .durable, createsMissingTables: Bool, keepsAssets: Bool = false
    ) -> StoreConfiguration {
        StoreConfiguration(
            tables: keepsAssets ? allTables + [assetChunks] : allTables, layouts: tableLayouts, durability: durability,
            createsMissingTables: createsMissingTables)
    }

    /// The bytes of the assets of a store that keeps them in the database rather than in
    /// files beside it (a store on a database server; ``AssetChunks``). Only such stores
    /// have this table.
    static let assetChunks = "assetChunks"

    // MARK: meta keys
    static let metaFormat: [UInt8] = Array("format".utf8)
    static let metaIncarnation: [UInt8] = Array("incarnation".utf8)
    static let metaSequence: [UInt8] = Array("sequence".utf8)
    static let metaNextRowID: [UInt8] = Array("nextRow".utf8)
    static let metaNextZoneID: [UInt8] = Array("nextZone".utf8)
    static let metaNextNameID: [UInt8] = Array("nextName".utf8)
    static let metaIdentifier: [UInt8] = Array("identifier".utf8)
    /// `meta` keys of store documents (`Container.Administrator.storeDocument(named:)`):
    /// this prefix and the document's name.
    static let metaDocumentPrefix: [UInt8] = Array("document/".utf8)

    /// `zones`: (scope, owner user record name, zone name) → zone info.
    static func zoneKey(scope: Int, owner: String, zoneName: String) -> [UInt8] {
        var w = KeyWriter(capacity: 16 + owner.utf8.count + zoneName.utf8.count)
        w.append(Int64(scope))
        w.append(owner)
        w.append(zoneName)
        return w.bytes
    }

    /// The prefix of every zone of one database.
    static func zonePrefix(scope: Int, owner: String) -> [UInt8] {
        var w = KeyWriter(capacity: 16 + owner.utf8.count)
        w.append(Int64(scope))
        w.append(owner)
        return w.bytes
    }

    /// `names`: (zone id, record name) → row id.
    @inline(__always)
    static func nameKey(zone: Int64, recordName: String) -> [UInt8] {
        var w = KeyWriter(capacity: 8 + recordName.utf8.count)
        w.append(zone)
        w.append(recordName)
        return w.bytes
    }

    /// Calls `body` with ``nameKey(zone:recordName:)`` built on the stack instead of in an
    /// array (a fetch by ID looks one up per record); see ``writeKey(into:_:_:_:)``.
    @inline(__always)
    static func withNameKey<R>(zone: Int64, recordName: String, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) { buffer in
            guard let count = writeKey(into: buffer, zone, recordName, nil) else {
                return try nameKey(zone: zone, recordName: recordName).withUnsafeBytes(body)
            }
            return try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// Calls `body` with ``zoneKey(scope:owner:zoneName:)`` built on the stack (every request
    /// reads its zone).
    @inline(__always)
    static func withZoneKey<R>(scope: Int, owner: String, zoneName: String, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) { buffer in
            guard let count = writeKey(into: buffer, Int64(scope), owner, zoneName) else {
                return try zoneKey(scope: scope, owner: owner, zoneName: zoneName).withUnsafeBytes(body)
            }
            return try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// Writes the tuple key (`number`, `first`, `second`) — a tuple integer, then one or two
    /// tuple strings, the bytes ``KeyWriter`` writes — into `key`; returns its length. `nil`
    /// when the key must come from the key writer instead: a negative number, a string with a
    /// zero byte (which the tuple layer escapes), or a key longer than `key`.
    @inline(__always)
    static func writeKey(into key: UnsafeMutableRawBufferPointer, _ number: Int64, _ first: String, _ second: String?) -> Int? {
        guard number >= 0, key.count >= 9 else { return nil }
        let numberBytes = (64 - number.leadingZeroBitCount + 7) / 8
        key[0] = 0x14 + UInt8(numberBytes)
        var i = 1
        var shift = 8 * (numberBytes - 1)
        while shift >= 0 {
            key[i] = UInt8(truncatingIfNeeded: number >> shift)
            i += 1
            shift -= 8
        }
        guard appendString(first, to: key, at: &i) else { return nil }
        if let second, !appendString(second, to: key, at: &i) { return nil }
        return i
    }

    @inline(__always)
    private static func appendString(_ string: String, to key: UnsafeMutableRawBufferPointer, at i: inout Int) -> Bool {
        var string = string
        return string.withUTF8 { utf8 -> Bool in
            guard utf8.count <= key.count - i - 2, utf8.isEmpty || memchr(utf8.baseAddress!, 0, utf8.count) == nil else { return false }
            key[i] = 0x02
            if let source = utf8.baseAddress, !utf8.isEmpty { (key.baseAddress! + i + 1).copyMemory(from: source, byteCount: utf8.count) }
            key[i + 1 + utf8.count] = 0x00
            i += utf8.count + 2
            return true
        }
    }

    /// The prefix of every key of one zone in the tables keyed by zone first: `names`, `refs`,
    /// `indexes` and `changes`.
    static func namePrefix(zone: Int64) -> [UInt8] { zoneRowsPrefix(zone: zone) }

    /// The prefix every key about a zone's records starts with in `names`, `refs`, `indexes`
    /// and `changes`: the zone id.
    static func zoneRowsPrefix(zone: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 9)
        w.append(zone)
        return w.bytes
    }

    /// `schema`: ("n", name) → id; ("i", id) → name.
    static func nameToIDKey(_ name: String) -> [UInt8] {
        var w = KeyWriter(capacity: 4 + name.utf8.count)
        w.append("n")
        w.append(name)
        return w.bytes
    }

    static func idToNameKey(_ id: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 12)
        w.append("i")
        w.append(id)
        return w.bytes
    }

    /// `schema`: ("f", record type id, field name id) → field type code.
    static func fieldTypeKey(type: Int64, field: Int64) -> [UInt8] {
        schemaKey("f", type: type, field: field)
    }

    /// `schema`: (tag, record type id, field id), the keys of per-field schema entries.
    static func schemaKey(_ tag: String, type: Int64, field: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 20)
        w.append(tag)
        w.append(type)
        w.append(field)
        return w.bytes
    }

    /// `refs`: (zone id, target record name, source row id) → ∅, for `deleteSelf` cascades.
    static func refKey(zone: Int64, target: String, source: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 20 + target.utf8.count)
        w.append(zone)
        w.append(target)
        w.append(source)
        return w.bytes
    }

    static func refPrefix(zone: Int64, target: String) -> [UInt8] {
        var w = KeyWriter(capacity: 12 + target.utf8.count)
        w.append(zone)
        w.append(target)
        return w.bytes
    }

    /// `assets`: stored asset name (UTF-8: the SHA-256 in hexadecimal, or the UUID of a file
    /// stored before version 4) → BE64 number of references.
    static func assetKey(_ name: String) -> [UInt8] { Array(name.utf8) }

    /// `users`: identity → user record name.
    static func userKey(_ identity: String) -> [UInt8] { Array(identity.utf8) }

    /// 16 random bytes that name one copy of a store (`meta/incarnation`).
    static func newIncarnation() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
