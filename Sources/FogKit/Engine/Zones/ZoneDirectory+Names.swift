import FogStorage
import Foundation

extension ZoneDirectory {
    /// The zones a query with no zone searches, read in `txn`: the default zone first, then
    /// the database's custom zones by name. The public database has only its default zone;
    /// a private database holds its user's zones. (The shared database has no such list: a
    /// query there names its zone.)
    func queryableZoneIDs(context: DatabaseContext, in txn: Store.ReadTransaction) throws -> [RecordZone.ID] {
        var result = [RecordZone.ID.default]
        guard context.scope == .private else { return result }
        guard let user = context.user else {
            throw FogError(.internalError, message: "the access policy let nobody into a private database")
        }
        try txn.scan(zones, range: .prefix(Layout.zonePrefix(scope: Database.Scope.private.rawValue, owner: user))) { key, _ in
            var reader = KeyReader(Array(key))
            _ = try reader.readInt64()
            _ = try reader.readString()
            let name = try reader.readString()
            if name != RecordZone.ID.defaultZoneName { result.append(RecordZone.ID(zoneName: name)) }
            return true
        }
        return result
    }
}
