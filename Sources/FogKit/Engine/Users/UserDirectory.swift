import FogStorage
import Foundation

/// The users a store has seen: each identity's user record name, and the two `Users`
/// records CloudKit gives a user (one in the public database, one in the user's private one);
/// and the user directory, which ties an email address and a name to a user
/// (`UserDirectory+Entries.swift`).
final class UserDirectory<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let records: RecordStore<Store>
    let indexes: IndexStore<Store>
    let catalog: SchemaCatalog<Store>
    let changes: ChangeLog<Store>
    let zones: ZoneDirectory<Store>
    /// User identity → user record name; the directory's entries (`Layout+Users.swift`).
    let users: Table

    init(
        core: EngineCore<Store>, records: RecordStore<Store>, indexes: IndexStore<Store>, catalog: SchemaCatalog<Store>,
        changes: ChangeLog<Store>, zones: ZoneDirectory<Store>
    ) {
        self.core = core
        self.records = records
        self.indexes = indexes
        self.catalog = catalog
        self.changes = changes
        self.zones = zones
        users = core.store.table(named: Layout.users)
    }

    /// The user record name of `identity`, registering the user on first sight:
    /// a name of `_` and 32 hex digits, and the user's two `Users` records (one in
    /// the public database, one in the user's private database), as CloudKit makes them.
    func userRecordName(for identity: String) throws -> String {
        let key = Layout.userKey(identity)
        if let existing = try read({ txn, _ in try txn.value(forKey: key, in: users) }) {
            return String(decoding: existing, as: UTF8.self)
        }
        return try writeAndWait { [self] txn, names in try registeredName(of: identity, in: txn, names: &names) }
    }

    /// The user record name of `identity` inside a write transaction, registering the
    /// user when the store does not know it yet (see ``userRecordName(for:)``).
    func registeredName(of identity: String, in txn: Store.WriteTransaction, names: inout NameWriter<Store>) throws -> String {
        let key = Layout.userKey(identity)
        if let existing = try txn.value(forKey: key, in: users) { return String(decoding: existing, as: UTF8.self) }
        var generator = SystemRandomNumberGenerator()
        let hex = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        let candidate = "_" + hex
        try txn.put(Array(candidate.utf8), forKey: key, in: users)
        try createUserRecords(candidate, txn: txn, names: &names)
        return candidate
    }

    /// Writes a user's two `Users` records (and their default zones when missing), and the
    /// `Users` type into the catalog when missing, in every environment.
    func createUserRecords(_ candidate: String, txn: Store.WriteTransaction, names: inout NameWriter<Store>) throws {
        _ = try catalog.addRecordTypeIfMissing(Record.SystemType.userRecord, txn: txn, names: &names)
        let sequence = try nextCounter(Layout.metaSequence, in: txn)
        let now = Date()
        let addresses = [
            ZoneAddress(scope: Database.Scope.public.rawValue, owner: "", zoneName: RecordZone.ID.defaultZoneName),
            ZoneAddress(scope: Database.Scope.private.rawValue, owner: candidate, zoneName: RecordZone.ID.defaultZoneName),
        ]
        for address in addresses {
            let zone = try zones.createZone(at: address, capabilities: [], sequence: sequence, in: txn)
            let row = try nextCounter(Layout.metaNextRowID, in: txn)
            let record = StoredRecord(
                recordType: Record.SystemType.userRecord, recordName: candidate, zone: zone.id, values: [:],
                parent: nil, share: nil, creationDate: now, modificationDate: now, creator: candidate,
                modifier: candidate, changeSequence: sequence)
            try txn.put(RecordCodec.encode(record, names: &names), forKey: bigEndianKey(row), in: records.table)
            try txn.put(bigEndianKey(row), forKey: Layout.nameKey(zone: zone.id, recordName: candidate), in: records.names)
            try indexes.updateIndexEntries(old: nil, new: record, row: row, zone: zone.id, txn: txn, names: &names.resolver)
            try changes.logSave(zone: zone.id, row: row, name: candidate, previousSequence: nil, sequence: sequence, txn: txn)
            try changes.logZone(.changed, address: address, zone: zone.id, sequence: sequence, txn: txn)
        }
    }
}
