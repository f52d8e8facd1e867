import FogStorage
import Foundation

// How a modify request plans each item before anything is written: the checks, the stored
// record it replaces, the schema and cascade it needs. Planning only reads.
extension ModifyRun {
    /// What the plans of one all-or-nothing group add before any of them is applied.
    struct PendingPlans {
        struct FieldKey: Hashable {
            let recordType: String
            let field: String
        }
        var fieldTypes: [FieldKey: FieldType] = [:]
        var deleteSelfReferences: [String: Int] = [:]
    }

    mutating func plan(_ item: Item, zone: ZoneInfo, savedNames: Set<String>, pending: inout PendingPlans) throws(FogError) -> Plan {
        if let e = item.preError { throw e }
        switch item.kind {
        case .delete(let id):
            guard let existing = try fogTry({ try loadDecoded(zone: zone.id, name: id.recordName) }) else {
                if deletedNames.contains(id.recordName) { return .alreadyDeleted }
                throw FogError(
                    .unknownItem,
                    message: sharedZone == nil
                        ? "record \(id.recordName) does not exist in zone \(id.zoneID.zoneName)" : AccessPolicy.notShared(id.recordName))
            }
            if let sharedZone, existing.record.recordType == Record.SystemType.share {
                // A participant "deleting" a share leaves it (`ModifyRun+Shares.swift`).
                try writer.access.check(
                    .leaveShare,
                    AccessRequest(
                        caller: .user(user), recordName: id.recordName,
                        shareStanding: sharedZone.shares.contains { $0.name == id.recordName } ? .participant(.accepted) : .outsider))
                try checkDeleteTag(item, existing.record)
                return .leave(row: existing.row, share: existing.record)
            }
            try writer.access.check(.delete, try request(for: existing.record), grants: try publicGrants(existing.record.recordType))
            try checkDeleteTag(item, existing.record)
            try checkCascade(from: existing.row, existing.record, zone: zone.id)
            return .delete(row: existing.row, record: existing.record)
        case .save(let client):
            return .save(try planSave(client, zone: zone, savedNames: savedNames, pending: &pending))
        }
    }

    mutating func planSave(
        _ client: ClientRecord, zone: ZoneInfo, savedNames: Set<String>, pending: inout PendingPlans
    ) throws(FogError) -> SavePlan {
        let name = client.recordID.recordName
        let existing = try fogTry { try load(zone: zone.id, name: name) }
        if sharedZone != nil {
            // In the shared database the policy speaks first: a conflict error would hand out
            // a record the user may not see (its `serverRecord`).
            try writer.access.check(
                .save, try request(for: existing?.header, recordType: client.recordType, recordName: name, client: client))
        }
        if existing == nil && name.hasPrefix("_") {
            throw FogError(
                .invalidArguments, message: "record name '\(name)' starts with '_', which is reserved for records the system creates")
        }
        if existing == nil && client.recordType == Record.SystemType.userRecord {
            throw FogError(.invalidArguments, message: "user records (type Users) are created by the system, not by clients")
        }
        switch client.rule {
        case nil:
            switch policy {
            case .ifServerRecordUnchanged:
                if let existing, client.changeTag == nil { throw try alreadyExists(existing, client) }
                if let existing, client.changeTag != existing.header.changeTag { throw try changedSinceFetched(existing, client) }
                if existing == nil, client.changeTag != nil { throw notFound(name) }
            case .changedKeys, .allKeys:
                break
            }
        case .create?:
            if let existing { throw try alreadyExists(existing, client) }
        case .update?, .replace?:
            guard let existing else { throw notFound(name) }
            if client.changeTag != existing.header.changeTag { throw try changedSinceFetched(existing, client) }
        case .forceUpdate?, .forceReplace?:
            break
        }
        try writer.access.check(.save, try request(for: existing?.header, recordType: client.recordType, recordName: name, client: client))
        if let existing, existing.header.recordType != client.recordType {
            throw FogError(.invalidArguments, message: "record \(name) is a \(existing.header.recordType), not a \(client.recordType)")
        }

        // The values to store: a new record's, or the keys an update writes (the stored
        // record's other fields are kept as they are encoded).
        var values: [String: FieldValue] = [:]
        var changes = FieldChanges()
        if existing != nil {
            for key in client.changedKeys { changes.set(key, client.values[key]) }
            if client.rule?.replacesFields ?? (policy == .allKeys) { for (key, value) in client.values { changes.set(key, value) } }
            if let existing, client.rule?.replacesFields == true {
                // The stored fields the client does not hold are removed; the reserved fields
                // the store keeps for a share are not the client's to remove.
                for field in existing.fields where client.values[field.name] == nil && !Self.isReservedField(field.name) {
                    changes.set(field.name, nil)
                }
            }
        } else {
            values = client.values
        }
        if client.recordType == Record.SystemType.share {
            // The share's state as the store keeps it (`ModifyRun+Shares.swift`).
            for (key, value) in try planShare(client, existing: existing, zone: zone) {
                if existing != nil { changes.set(key, value) } else { values[key] = value }
            }
        }
        // The values written, by key: a new record's, or the ones an update sets (an update
        // builds no dictionary of them, and one array: an update of one key has nothing to sort).
        var written: [(key: String, value: FieldValue)] = []
        if existing == nil {
            written = values.sorted { $0.key < $1.key }
        } else {
            written.reserveCapacity(changes.keys.count)
            for (key, value) in changes.entries { if let value { written.append((key, value)) } }
            if written.count > 1 { written.sort { $0.key < $1.key } }
        }

        // Each field's type is fixed by its first write (the fields an update keeps were
        // checked when they were written, and a fixed type never changes). In production the
        // record type and every field must be in the schema already.
        // Share records (`cloudkit.share`) are the system's: their type and fields are in
        // every environment, outside the catalog.
        let production = context.schemaMode == .production && client.recordType != Record.SystemType.share
        if production, existing == nil { try checkKnownType(client.recordType) }
        if context.scope == .public {
            // After the production check (an unknown type is `unknownItem`); in development
            // a type missing from the catalog is checked with the grants it gets when created.
            try writer.access.checkRoles(
                .save, request(for: existing?.header, recordType: client.recordType, recordName: name),
                grants: try publicGrants(client.recordType, saving: true))
        }
        var newTypes: [(String, FieldType)] = []
        for (key, value) in written {
            // An encrypted field is typed by the value it seals (its stored value is bytes).
            let encrypted = Record.isEncryptedKey(key)
            let shown = encrypted ? Record.plainKey(ofEncrypted: key) : key
            let type = encrypted ? (client.encryptedTypes[key] ?? value.fieldType) : value.fieldType
            // The types the group's earlier plans fixed (mostly none: no key to hash).
            var fixed =
                pending.fieldTypes.isEmpty ? nil : pending.fieldTypes[PendingPlans.FieldKey(recordType: client.recordType, field: key)]
            if fixed == nil { fixed = try fogTry { try names.fieldType(recordType: client.recordType, field: key) } }
            if let fixed {
                guard fixed == type else {
                    throw FogError(
                        .invalidArguments,
                        message:
                            "field '\(shown)' of record type \(client.recordType) holds \(fixed.name) values; cannot save a \(type.name) in record \(name)"
                    )
                }
            } else {
                // A key names either a plain or an encrypted field of a record type, never both
                // (the schema keeps an encrypted field under its stored name).
                let other = encrypted ? Record.plainKey(ofEncrypted: key) : Record.encryptedKey(key)
                if let otherDeclared = try fogTry({ try declaration(recordType: client.recordType, field: other) }),
                    !otherDeclared.isRetired
                {
                    throw FogError(
                        .invalidArguments,
                        message: encrypted
                            ? "field '\(other)' of record type \(client.recordType) is a plain field; cannot save it through encryptedValues in record \(name)"
                            : "field '\(key)' of record type \(client.recordType) is an encrypted field; save it through encryptedValues in record \(name)"
                    )
                }
                // A field the schema declares `NUMBER` without a representation yet takes
                // the first number saved; a field the schema lacks is created (development).
                if let declared = try fogTry({ try declaration(recordType: client.recordType, field: key) }) {
                    guard declared.accepts(type) else {
                        throw FogError(
                            .invalidArguments,
                            message:
                                "field '\(shown)' of record type \(client.recordType) is declared \(declared.dataType); cannot save a \(type.name) in record \(name)"
                        )
                    }
                } else if production {
                    throw FogError(
                        .invalidArguments,
                        message:
                            "Cannot create new field '\(shown)' in production schema: record type \(client.recordType) has no such field (record \(name))"
                    )
                }
                newTypes.append((key, type))
            }
        }

        let size = RecordCodec.countedSize(of: written) + (existing?.countedSize(keptBeside: changes) ?? 0)
        guard size <= Validation.maximumRecordSize else {
            throw FogError(
                .limitExceeded,
                message: "record \(name) would hold \(size) bytes; the limit is \(Validation.maximumRecordSize) (assets excluded)")
        }

        // The parent must exist, or be saved in the same request.
        let parent: String?
        if existing == nil || client.parentChanged {
            parent = client.parent?.recordID.recordName
            if let parent, !savedNames.contains(parent) {
                guard try fogTry({ try writer.records.rowID(zone: zone.id, name: parent, in: txn.readView) }) != nil else {
                    throw FogError(.referenceViolation, message: "the parent of \(name), \(parent), does not exist")
                }
            }
        } else {
            parent = existing!.header.parent
        }

        // Cascading references are limited per target (counting those planned in the group).
        let oldTargets: Set<String>
        let newTargets: Set<String>
        if let existing {
            var references = try fogTry { try existing.referenceValues() }
            oldTargets = deleteSelfTargets(references)
            // Only a change to a reference field, or one that writes a reference, can change them.
            let touchesReferences = changes.entries.contains { key, value in
                references[key] != nil || value.map { $0.fieldType == .reference || $0.fieldType == .referenceList } ?? false
            }
            if touchesReferences {
                for (key, value) in changes.entries { references[key] = value }
                newTargets = deleteSelfTargets(references)
            } else {
                newTargets = oldTargets
            }
        } else {
            oldTargets = []
            newTargets = deleteSelfTargets(values)
        }
        let addedTargets = newTargets.isEmpty ? [] : newTargets.subtracting(oldTargets)
        for target in addedTargets {
            let stored = try fogTry {
                try writer.records.countRefs(zone: zone.id, target: target, limit: Validation.maximumDeleteSelfReferences, in: txn.readView)
            }
            let count = stored + (pending.deleteSelfReferences[target] ?? 0)
            guard count < Validation.maximumDeleteSelfReferences else {
                throw FogError(
                    .limitExceeded,
                    message:
                        "record \(target) already has \(count) deleteSelf references; the limit is \(Validation.maximumDeleteSelfReferences)"
                )
            }
        }
        for target in addedTargets { pending.deleteSelfReferences[target, default: 0] += 1 }
        for (key, type) in newTypes { pending.fieldTypes[PendingPlans.FieldKey(recordType: client.recordType, field: key)] = type }
        return SavePlan(
            client: client, existing: existing, values: values, changes: changes, parent: parent, newFieldTypes: newTypes,
            oldTargets: oldTargets, newTargets: newTargets)
    }

    /// The error of a save that makes a new record whose ID is stored.
    func alreadyExists(_ existing: EncodedRecord, _ client: ClientRecord) throws(FogError) -> FogError {
        FogError(
            .serverRecordChanged, message: "record to insert already exists: \(client.recordID.recordName)",
            serverRecord: try serverRecord(existing, zoneID: client.recordID.zoneID), clientRecord: client.record)
    }

    /// The error of a save whose change tag is not the stored record's.
    func changedSinceFetched(_ existing: EncodedRecord, _ client: ClientRecord) throws(FogError) -> FogError {
        FogError(
            .serverRecordChanged,
            message:
                "record \(client.recordID.recordName) changed since it was fetched (tag \(client.changeTag ?? "none") is not \(existing.header.changeTag))",
            serverRecord: try serverRecord(existing, zoneID: client.recordID.zoneID), clientRecord: client.record,
            ancestorRecord: client.ancestor())
    }

    /// The error of an update (a save with a change tag) of a record that is not stored.
    func notFound(_ name: String) -> FogError {
        FogError(.unknownItem, message: sharedZone == nil ? "record to update not found: \(name)" : AccessPolicy.notShared(name))
    }

    /// Whether a stored field name is one the store keeps for itself (a share's state,
    /// `Share+Storage.swift`) rather than a client's field: `___` names other than the
    /// encrypted fields'.
    static func isReservedField(_ name: String) -> Bool {
        name.hasPrefix("___") && !Record.isEncryptedKey(name)
    }

    /// Fails a delete that names a change tag (``WebServices/RecordOperation/delete(_:recordChangeTag:)``)
    /// when the stored record has another.
    func checkDeleteTag(_ item: Item, _ existing: StoredRecord) throws(FogError) {
        guard !deleteTags.isEmpty, let tag = deleteTags[item.index], tag != existing.changeTag else { return }
        throw FogError(
            .serverRecordChanged,
            message: "record \(existing.recordName) changed since it was fetched (tag \(tag) is not \(existing.changeTag))",
            serverRecord: try makeRecord(existing, zoneID: item.id.zoneID))
    }

    /// What the access policy is asked about a stored record (or a new one, for `nil`); for a
    /// save, `client` is the record as saved. In the shared database the request says whether
    /// an accepted share covers the record (before and after a save) and with what permission.
    func request(
        for record: StoredRecord?, recordType: String? = nil, recordName: String? = nil, cascadeOrigin: String? = nil,
        client: ClientRecord? = nil
    ) throws(FogError) -> AccessRequest {
        var request = AccessRequest(
            caller: .user(user), scope: context.scope, zoneOwner: context.scope == .public ? "" : user,
            recordType: record?.recordType ?? recordType, recordName: record?.recordName ?? recordName, creator: record?.creator,
            cascadeOrigin: cascadeOrigin)
        if let sharedZone {
            request.zoneOwner = sharedZone.owner
            try describeSharedAccess(of: record, client: client, into: &request)
        }
        return request
    }

    /// What the security roles grant the caller on record type `recordType` in the public
    /// database (``PublicGrants/none`` in the others, where roles do not apply). A type the
    /// catalog lacks has no grants, except for a save in development, which creates it
    /// just in time with CloudKit's defaults (``createJustInTime(_:newFields:)``) before writing.
    func publicGrants(_ recordType: String, saving: Bool = false) throws(FogError) -> PublicGrants {
        guard context.scope == .public else { return .none }
        return try fogTry {
            var resolver = names.resolver
            let snapshot = try writer.core.publicRoles.snapshot(core: writer.core, txn: txn.readView)
            return snapshot.grants(
                ofType: try resolver.id(recordType), named: recordType, caller: .user(user),
                justInTime: saving && context.schemaMode == .development)
        }
    }

    /// Asks the access policy about every record that deleting `record` would delete
    /// through `deleteSelf` references (as ``deleteRow(_:_:zone:)`` will), so a
    /// delete fails as a whole, before anything is written, when one of them may not be
    /// deleted by the caller.
    func checkCascade(from row: Int64, _ record: StoredRecord, zone: Int64) throws(FogError) {
        var visited: Set<Int64> = [row]
        var pending = [record.recordName]
        while let target = pending.popLast() {
            var sources: [Int64] = []
            try fogTry {
                try txn.scan(writer.records.refs, range: .prefix(Layout.refPrefix(zone: zone, target: target))) { key, _ in
                    var reader = KeyReader(Array(key))
                    _ = try reader.readInt64()
                    _ = try reader.readString()
                    sources.append(try reader.readInt64())
                    return true
                }
            }
            for source in sources where visited.insert(source).inserted {
                var resolver = names.resolver
                let stored = try fogTry {
                    try txn.withValue(forKey: bigEndianKey(source), in: writer.records.table) {
                        try RecordCodec.decode($0, names: &resolver, desiredKeys: [])
                    }
                }
                guard let stored else { continue }
                try writer.access.check(
                    .cascadeDelete, try request(for: stored, cascadeOrigin: record.recordName), grants: try publicGrants(stored.recordType))
                pending.append(stored.recordName)
            }
        }
    }

    /// The stored record `name`, its fields still encoded; `nil` when absent.
    mutating func load(zone: Int64, name: String) throws -> EncodedRecord? {
        guard let row = try writer.records.rowID(zone: zone, name: name, in: txn.readView) else { return nil }
        guard
            let record = try txn.withValue(
                forKey: bigEndianKey(row), in: writer.records.table,
                { try EncodedRecord(row: row, $0, lookedUp: name, names: &names.resolver) })
        else {
            throw FormatError(message: "record \(name) names row \(row), which is missing")
        }
        return record
    }

    /// The stored record `name`, decoded; `nil` when absent.
    func loadDecoded(zone: Int64, name: String) throws -> (row: Int64, record: StoredRecord)? {
        guard let row = try writer.records.rowID(zone: zone, name: name, in: txn.readView) else { return nil }
        var resolver = names.resolver
        guard
            let record = try txn.withValue(
                forKey: bigEndianKey(row), in: writer.records.table, { try RecordCodec.decode($0, names: &resolver) })
        else {
            throw FormatError(message: "record \(name) names row \(row), which is missing")
        }
        return (row, record)
    }

    func makeRecord(_ stored: StoredRecord, zoneID: RecordZone.ID) throws(FogError) -> Record {
        guard stored.values.keys.contains(where: Record.isEncryptedKey) else {
            return stored.makeRecord(zoneID: zoneID, assetDirectory: writer.assetDirectory)
        }
        // The client gets its encrypted fields decrypted, as a fetch returns them.
        var decrypted = stored
        try writer.core.cipher.openAll(&decrypted.values, recordName: stored.recordName)
        return decrypted.makeRecord(zoneID: zoneID, assetDirectory: writer.assetDirectory)
    }

    /// The stored record as a conflict error returns it.
    func serverRecord(_ existing: EncodedRecord, zoneID: RecordZone.ID) throws(FogError) -> Record {
        try makeRecord(try fogTry { try existing.decoded() }, zoneID: zoneID)
    }

    /// The record an update returns, from its new encoding: its fields stay encoded until
    /// read, as a fetched record's do.
    mutating func makeRecord(encoded bytes: [UInt8], id: Record.ID) throws -> Record {
        if resultTable?.zoneID != id.zoneID {
            resultTable = FieldNameTable(
                zoneID: id.zoneID, assetDirectory: writer.assetDirectory, selection: .all, cipher: writer.core.cipher)
        }
        let table = resultTable!
        return try bytes.withUnsafeBytes { buffer in
            try RecordView(buffer, checking: .all).makeRecord(id: id, table: table, arena: &resultArena, names: &names.resolver)
        }
    }

}
