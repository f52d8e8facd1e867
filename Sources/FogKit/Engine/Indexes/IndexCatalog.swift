import FogStorage
import Synchronization

/// The declared indexes of one record type, by field name (user and system fields).
struct TypeIndexes: Sendable, Hashable {
    var fields: [String: IndexOptions] = [:]
    /// The fields of `fields` whose index is still being built for the records stored before
    /// it was declared: saves keep their entries, queries do not use them.
    var building: Set<String> = []

    static let none = TypeIndexes()

    /// The indexes queries may use: those whose build is complete.
    var ready: TypeIndexes {
        guard !building.isEmpty else { return self }
        return TypeIndexes(fields: fields.filter { !building.contains($0.key) })
    }

    func options(_ field: String) -> IndexOptions { fields[field] ?? [] }

    /// The fields marked searchable, in name order.
    var searchableFields: [String] { fields.filter { $0.value.contains(.searchable) }.map(\.key).sorted() }

    /// Whether a location field has an index (either option gives it one).
    func hasLocationIndex(_ field: String) -> Bool { !options(field).isDisjoint(with: [.queryable, .sortable]) }
}

/// The declared indexes of every record type, cached in memory.
///
/// The `schema` table is the truth: entries `("x", type id, field id) → options`, entries
/// `("b", type id, field id) → progress` for the indexes still being built, and a version
/// number in `meta` that every change of a definition or of a build's state (building →
/// ready) increments. A reader or writer compares the version in its own transaction with
/// the cached one and reloads on a difference, so a transaction always sees the indexes of its
/// own snapshot — also the writer, right after an index change earlier in the same group
/// commit. What a reader loads fills the cache at once; what a writer loads fills it once the
/// write commits (``NameResolver/publishAfterCommit(_:)``), so that a store that is only
/// written to does not load the definitions in every write.
final class IndexCatalog: Sendable {
    private struct Cached: Sendable {
        var version: Int64
        var types: [String: TypeIndexes]
    }

    private let cached = Mutex<Cached?>(nil)
    /// How many times the definitions were read from the store rather than the cache.
    let loads = Atomic<Int>(0)

    /// The indexes of every record type as `txn` sees them.
    func indexes<Store>(
        core: EngineCore<Store>, txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws -> [String: TypeIndexes] {
        let version = try core.schemaVersion(in: txn)
        if let hit = cached.withLock({ $0?.version == version ? $0?.types : nil }) { return hit }
        loads.add(1, ordering: .relaxed)
        var types: [String: TypeIndexes] = [:]
        var entries: [(Int64, Int64, IndexOptions)] = []
        try txn.scan(core.schema, range: .prefix(Layout.indexDefinitionPrefix)) { key, value in
            var reader = KeyReader(key)
            _ = try reader.readString()
            let type = try reader.readInt64()
            let field = try reader.readInt64()
            guard value.count == 1 else { throw FormatError(message: "index definition of \(value.count) bytes") }
            entries.append((type, field, IndexOptions(rawValue: value[0])))
            return true
        }
        var building: [(Int64, Int64)] = []
        try txn.scan(core.schema, range: .prefix(Layout.indexBuildPrefix)) { key, _ in
            var reader = KeyReader(key)
            _ = try reader.readString()
            building.append((try reader.readInt64(), try reader.readInt64()))
            return true
        }
        for (type, field, options) in entries {
            types[try names.name(type), default: .none].fields[try names.name(field)] = options
        }
        for (type, field) in building {
            let typeName = try names.name(type), fieldName = try names.name(field)
            if types[typeName]?.fields[fieldName] != nil { types[typeName]?.building.insert(fieldName) }
        }
        // Only committed snapshots fill the cache: a reader's now, a writer's once it commits.
        // (A writer may read a version an earlier request of its group wrote; once committed,
        // that version is never written again with other definitions: every change of them
        // takes the next one.)
        let learned = Cached(version: version, types: types)
        let committed = txn.isReadOnly
        names.publishAfterCommit { [self] in
            cached.withLock { cache in
                // Versions only grow: a commit published late does not replace a newer one.
                if committed || (cache?.version ?? .min) < learned.version { cache = learned }
            }
        }
        return types
    }

    /// The indexes of one record type as `txn` sees them.
    func indexes<Store>(
        of recordType: String, core: EngineCore<Store>, txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws -> TypeIndexes {
        try indexes(core: core, txn: txn, names: &names)[recordType] ?? .none
    }
}

/// Counts the queries that ran without an index they needed (development only).
final class IndexAdvisor: Sendable {
    private struct Key: Hashable {
        let recordType: String
        let field: String
        let options: IndexOptions
    }

    private let counts = Mutex<[Key: Int]>([:])

    func record(_ missing: [IndexAdvice]) {
        guard !missing.isEmpty else { return }
        counts.withLock { counts in
            for m in missing { counts[Key(recordType: m.recordType, field: m.field, options: m.options), default: 0] += 1 }
        }
    }

    func advice() -> [IndexAdvice] {
        counts.withLock { $0 }
            .map { IndexAdvice(recordType: $0.key.recordType, field: $0.key.field, options: $0.key.options, queryCount: $0.value) }
            .sorted { ($1.queryCount, $0.recordType, $0.field) < ($0.queryCount, $1.recordType, $1.field) }
    }
}
