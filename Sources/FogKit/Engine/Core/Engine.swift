// swift-format-ignore-file: AmbiguousTrailingClosureOverload

import FogStorage
import Foundation

/// The storage engine of one container: its services, each with one job and the tables it
/// writes. `Container` and `Database` translate the public API into calls on these services.
/// Generic over the store's backend; `StoreEngine` names the one FogKit uses.
///
/// | service | folder | job | tables it writes |
/// |---|---|---|---|
/// | ``core`` | `Core/` | the store, transactions, names, counters | `meta`, `schema` (names) |
/// | ``records`` | `Records/` | rows by name, reference counts, asset files, record scans | `records`, `names`, `refs`, `assets` |
/// | ``writer`` | `Records/` | saves and deletes (modify requests, cascades) | through ``records``, ``indexes``, ``changes`` |
/// | ``reader`` | `Records/` | fetches by ID | — |
/// | ``queries`` | `Query/` | planning and running queries | — |
/// | ``indexes`` | `Indexes/` | index definitions and entries | `indexes`, `schema` (definitions) |
/// | ``catalog`` | `Schema/` | the schema catalog: types, fields, roles, grants; import, deploy, reset | `schema` (catalog) |
/// | ``changes`` | `Changes/` | the zone and database change logs | `changes`, `databaseChanges` |
/// | ``feeds`` | `Changes/` | reading the change logs as feeds | — |
/// | ``zones`` | `Zones/` | scopes, zone addresses, zone requests | `zones`, `zoneIDs` |
/// | ``users`` | `Users/` | user identities, their `Users` records, the user directory | `users` |
/// | ``shares`` | `Sharing/` | shares by URL: metadata, acceptance (saving them is ``writer``'s) | `records` (the share) |
/// | ``subscriptions`` | `Subscriptions/` | subscriptions, the notifications writes produce, listeners' positions | `subscriptions`, `notifications` |
/// | ``operations`` | `Operations/` | long-lived operations, kept until their result is delivered | `users` (keys `FF` "l") |
/// | ``maintenance`` | `Maintenance/` | integrity, migration, backup, store information | (migration: all) |
final class Engine<Store: KeyValueStore>: Sendable {
    let core: EngineCore<Store>
    let records: RecordStore<Store>
    let changes: ChangeLog<Store>
    let indexes: IndexStore<Store>
    let catalog: SchemaCatalog<Store>
    let zones: ZoneDirectory<Store>
    let users: UserDirectory<Store>
    let shares: ShareDirectory<Store>
    let writer: RecordWriter<Store>
    let reader: RecordReader<Store>
    let queries: QueryExecutor<Store>
    let feeds: ChangeFeeds<Store>
    let subscriptions: SubscriptionStore<Store>
    let maintenance: Maintenance<Store>
    let operations: LongLivedOperations<Store>

    /// Opens the store for `caller`; only the administrator migrates an older format.
    /// `advisor` collects the index advice (an administrator shares its own with the
    /// containers it makes).
    init(
        location: StoreLocation, identifier: String, durability: StorageDurability, caller: Caller,
        advisor: IndexAdvisor = IndexAdvisor(), encryptionKey: Data? = nil
    ) throws {
        let core = try EngineCore<Store>(
            location: location, identifier: identifier, durability: durability, encryptionKey: encryptionKey)
        self.core = core
        records = RecordStore(core: core)
        changes = ChangeLog(core: core, records: records)
        indexes = IndexStore(core: core, records: records, advisor: advisor)
        catalog = SchemaCatalog(core: core, indexes: indexes)
        zones = ZoneDirectory(core: core, records: records, indexes: indexes, changes: changes)
        users = UserDirectory(core: core, records: records, indexes: indexes, catalog: catalog, changes: changes, zones: zones)
        shares = ShareDirectory(core: core, records: records, indexes: indexes, changes: changes, zones: zones)
        reader = RecordReader(core: core, records: records, zones: zones)
        queries = QueryExecutor(core: core, records: records, indexes: indexes, zones: zones)
        subscriptions = SubscriptionStore(core: core, zones: zones, queries: queries, reader: reader)
        writer = RecordWriter(
            core: core, records: records, indexes: indexes, catalog: catalog, changes: changes, zones: zones, subscriptions: subscriptions)
        feeds = ChangeFeeds(core: core, records: records, changes: changes, zones: zones)
        maintenance = Maintenance(core: core, records: records, indexes: indexes, catalog: catalog, changes: changes, zones: zones)
        operations = LongLivedOperations(core: core)
        do {
            if core.openedVersion < Layout.formatVersion {
                try AccessPolicy.standard.check(.administer(.migrate), AccessRequest(caller: caller))
                try maintenance.migrate(from: core.openedVersion)
            }
            try maintenance.checkIndexTableLayout()
            // Stores written before storage counters existed are counted once (`Engine/Usage`).
            try StorageUsage.countIfMissing(core: core, records: records.table, zones: zones.zones)
            // Asset files without a reference (a save that crashed before committing, a
            // deletion that committed just before a crash) go now.
            try records.assets.sweep()
        } catch {
            core.close()
            throw FogError.wrapping(error)
        }
    }

    /// The durability the store's commits get: the strongest one any open of its directory in
    /// this process asked for, at least the one this engine asked for.
    var effectiveDurability: StorageDurability { core.store.durability }

    /// The policy every access decision asks, here and in every service.
    var access: AccessPolicy { .standard }

    func close() { core.close() }
}

/// A part of the engine: it reaches the store and the names through ``core``, and the
/// services it builds on through properties of its own.
protocol EngineService: Sendable {
    associatedtype Store: KeyValueStore
    var core: EngineCore<Store> { get }
}

extension EngineService {
    /// The policy every access decision asks.
    var access: AccessPolicy { .standard }
    /// The folder that holds the store's asset files.
    var assetDirectory: URL { core.assetDirectory }

    /// Runs `body` in a read snapshot with a name resolver.
    @inline(__always)
    func read<R>(_ body: (Store.ReadTransaction, inout NameResolver<Store>) throws -> R) throws -> R {
        try core.read(body)
    }

    /// Runs `body` in a write transaction (``EngineCore/write(_:)``).
    func write<R: Sendable>(_ body: @escaping @Sendable (Store.WriteTransaction, inout NameWriter<Store>) throws -> R) async throws -> R {
        try await core.write(body)
    }

    /// The blocking form of ``write(_:)`` (``EngineCore/writeAndWait(alone:_:)``).
    func writeAndWait<R>(alone: Bool = false, _ body: @escaping (Store.WriteTransaction, inout NameWriter<Store>) throws -> R) throws -> R {
        try core.writeAndWait(alone: alone, body)
    }

    /// Takes the next value of a counter in `meta` (starting at 1).
    func nextCounter(_ key: [UInt8], in txn: Store.WriteTransaction) throws -> Int64 {
        try core.nextCounter(key, in: txn)
    }

    /// The current value of the commit sequence.
    func currentSequence(in txn: Store.ReadTransaction) throws -> Int64 {
        try core.currentSequence(in: txn)
    }
}

/// Turns storage and format errors into ``FogError``s; FogErrors pass through.
func mapStorageErrors<R>(_ body: () throws -> R) throws -> R {
    do { return try body() } catch { throw FogError.wrapping(error) }
}

// The async twin of the function above; the compiler picks by context (with or without
// `await`), which is why this file opts out of AmbiguousTrailingClosureOverload.
func mapStorageErrors<R>(_ body: () async throws -> R) async throws -> R {
    do { return try await body() } catch { throw FogError.wrapping(error) }
}

extension FogError {
    static func wrapping(_ error: any Error) -> FogError {
        switch error {
        case let e as FogError: return e
        case let e as StorageError where e == .closed:
            return FogError(.internalError, message: "the container is closed", underlyingError: e)
        case let e as StorageError:
            switch e {
            case .temporarilyUnavailable:
                // Retryable: another read ends, or another process, within moments.
                return FogError(.serviceUnavailable, message: "the store is busy: \(e)", retryAfterSeconds: 1, underlyingError: e)
            case .corrupted:
                return FogError(.internalError, message: "the store is damaged: \(e)", underlyingError: e)
            default:
                return FogError(.internalError, message: "storage error: \(e)", underlyingError: e)
            }
        case let e as FormatError:
            return FogError(.internalError, message: e.description, underlyingError: e)
        default:
            return FogError(.internalError, message: "\(error)", underlyingError: error)
        }
    }
}

/// Runs `body`, turning any error into a ``FogError`` (typed throws).
func fogTry<R>(_ body: () throws -> R) throws(FogError) -> R {
    do { return try body() } catch { throw FogError.wrapping(error) }
}
