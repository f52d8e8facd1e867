import FogStorage
import Foundation

extension Maintenance where Store == OpenedStore {
    /// Reads the container identifier stored at `location`, or `nil` when there is no
    /// store there.
    static func storedIdentifier(at location: StoreLocation) throws -> String? {
        guard location.storeExists() else { return nil }
        let store: Store
        do {
            store = try Store.open(
                at: location, configuration: Layout.configuration(createsMissingTables: false, keepsAssets: !location.isDirectory))
        } catch StorageError.notFound {
            throw FogError(.incompatibleVersion, message: "\(location) holds a store that is not a FogKit store")
        }
        defer { store.close() }
        let meta = store.table(named: Layout.meta)
        return try store.read { txn in
            try txn.value(forKey: Layout.metaIdentifier, in: meta).map { String(decoding: $0, as: UTF8.self) }
        }
    }
}

extension Maintenance {
    /// A description of the whole store.
    func describe() throws -> StoreInfo {
        let stats = try store.storeStatistics()
        return try read { txn, _ in
            var zonesFound: [StoreInfo.Zone] = []
            var ownersByUser: [String: String] = [:]
            // The identities; the user directory's keys come after them (`Layout+Users.swift`).
            try txn.scan(users, range: Layout.userIdentityRange) { key, value in
                ownersByUser[String(decoding: value, as: UTF8.self)] = String(decoding: key, as: UTF8.self)
                return true
            }
            try txn.scan(zones) { key, value in
                var reader = KeyReader(Array(key))
                let rawScope = Int(try reader.readInt64())
                guard let scope = Database.Scope(rawValue: rawScope) else {
                    throw FormatError(message: "zone entry with database scope \(rawScope)")
                }
                let owner = try reader.readString()
                let name = try reader.readString()
                let info = try ZoneInfo.decode(value)
                var count = 0
                try txn.scan(recordNames, range: .prefix(Layout.namePrefix(zone: info.id))) { _, _ in
                    count += 1
                    return true
                }
                zonesFound.append(
                    StoreInfo.Zone(
                        scope: scope, ownerIdentity: ownersByUser[owner], ownerRecordName: owner, zoneName: name,
                        capabilities: info.capabilities, recordCount: count))
                return true
            }
            var identifier = ""
            if let bytes = try txn.value(forKey: Layout.metaIdentifier, in: meta) { identifier = String(decoding: bytes, as: UTF8.self) }
            return StoreInfo(
                containerIdentifier: identifier, directory: core.location.url, formatVersion: Int(Layout.formatVersion),
                incarnation: try core.incarnation(in: txn).map { String(format: "%02x", $0) }.joined(),
                commitSequence: try currentSequence(in: txn),
                fileSize: stats.bytesUsed, reservedSize: stats.bytesReserved, commits: stats.commits, writeRequests: stats.writeRequests,
                userCount: ownersByUser.count,
                recordCount: try txn.count(of: records), zones: zonesFound)
        }
    }
}
