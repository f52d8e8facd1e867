import Foundation

/// The field names, user names, zone, asset folder and desired keys that the records of one
/// request share.
///
/// Records decoded by one fetch, query page or change batch refer to it, so each record
/// holds name ids (small integers) and the names themselves are looked up once per
/// request. It is filled while the request decodes, inside its read transaction, and only
/// read afterwards; a fetch may then hand it to later fetches, which only read it
/// (``FetchNameTables``).
///
/// Unchecked exclusivity on its variables: every field read looks a name up here, and the
/// dynamic check of a class's `var` (`swift_beginAccess`, twice per lookup) cost about as much
/// as the scan itself. The table is written only while its request decodes, by that request
/// alone, and only read after (see above), so no access can overlap a write.
final class FieldNameTable: @unchecked Sendable {
    /// The names of the fields the request's records hold, in the order first seen. A
    /// request reads a handful of fields, so a scan that compares short strings costs less
    /// than hashing the name; past 16 names dictionaries take over.
    @exclusivity(unchecked) private var fields = NamesByID()
    @exclusivity(unchecked) private var byName: [String: Int64] = [:]
    /// Bit `id` is set for each field id below 64 registered: the ids a store gives its first
    /// names (the field names of its first record types among them), so that
    /// ``contains(_:)``, asked for every field of every record, is one test instead of a scan.
    @exclusivity(unchecked) private var lowIDs: UInt64 = 0
    /// The creators and last modifiers of the request's records (``StoredSystemFields``).
    @exclusivity(unchecked) private var users = NamesByID()
    let zoneID: RecordZone.ID
    let assetDirectory: URL
    /// The fields the request returns (its desired keys).
    let selection: FieldSelection
    /// Decrypts the encrypted fields of the request's records.
    let cipher: FieldCipher
    /// Whether a registered name is an encrypted field's (``Record/isEncryptedKey(_:)``):
    /// only then do records of the request look for fields to decrypt.
    @exclusivity(unchecked) private(set) var holdsEncryptedNames = false

    init(zoneID: RecordZone.ID, assetDirectory: URL, selection: FieldSelection, cipher: FieldCipher) {
        self.zoneID = zoneID
        self.assetDirectory = assetDirectory
        self.selection = selection
        self.cipher = cipher
    }

    /// Makes sure the name of field `id` is known; `expected` sizes the table on first use.
    @inline(__always)
    func register<Store>(_ id: Int64, expected: Int, names resolver: inout NameResolver<Store>) throws {
        if contains(id) { return }
        let name = try resolver.name(id)
        if Record.isEncryptedKey(name) { holdsEncryptedNames = true }
        fields.append(id, name, reserving: max(expected, 4))
        if UInt64(bitPattern: id) < 64 { lowIDs |= 1 << UInt64(bitPattern: id) }
        if fields.count == 17 {
            for entry in fields.entries { byName[entry.name] = entry.id }
        } else if fields.count > 17 {
            byName[name] = id
        }
    }

    /// Makes sure the names of the creator and last modifier of `view` are known.
    @inline(__always)
    func registerUsers<Store>(of view: RecordView, names resolver: inout NameResolver<Store>) throws {
        if users.name(of: view.creator) == nil { users.append(view.creator, try resolver.name(view.creator), reserving: 2) }
        if view.modifier != view.creator, users.name(of: view.modifier) == nil {
            users.append(view.modifier, try resolver.name(view.modifier), reserving: 2)
        }
    }

    /// The name of the user `id`, when a record of the request was created or last changed by them.
    func userName(of id: Int64) -> String? { users.name(of: id) }

    /// The id of `name` when a record of the request holds the field; `nil` otherwise.
    /// Names of another length are passed over by their length alone (`==` on two different
    /// strings takes the runtime's slow comparison).
    @inline(__always)
    func id(of name: String) -> Int64? {
        if fields.count > 16 { return byName[name] }
        let length = name.utf8.count
        for entry in fields.entries where entry.name.utf8.count == length && entry.name == name { return entry.id }
        return nil
    }

    /// Whether the name of field `id` is known.
    @inline(__always)
    func contains(_ id: Int64) -> Bool {
        if UInt64(bitPattern: id) < 64 { return lowIDs & (1 << UInt64(bitPattern: id)) != 0 }
        return fields.name(of: id) != nil
    }

    /// Whether the table knows the name of every field of `view`, and of its creator and last
    /// modifier.
    func knowsNames(of view: RecordView) -> Bool {
        guard users.name(of: view.creator) != nil, view.modifier == view.creator || users.name(of: view.modifier) != nil else {
            return false
        }
        // The view's table was checked: ids, type bytes and lengths read plainly.
        let buffer = view.buffer
        var i = view.tableStart
        for _ in 0..<view.count {
            guard contains(Int64(bitPattern: RecordView.readVarint(buffer, &i))) else { return false }
            i += 1
            _ = RecordView.readVarint(buffer, &i)
        }
        return true
    }

    /// Whether any field name was registered.
    var hasNames: Bool { fields.count > 0 }

    /// The name of field `id`, if known.
    func name(of id: Int64) -> String? { fields.name(of: id) }
}

/// Names by id: scanned while there are few, found through a dictionary past 16.
struct NamesByID {
    private(set) var entries: [(id: Int64, name: String)] = []
    private var byID: [Int64: String] = [:]

    var count: Int { entries.count }

    @inline(__always)
    func name(of id: Int64) -> String? {
        if entries.count > 16 { return byID[id] }
        for entry in entries where entry.id == id { return entry.name }
        return nil
    }

    /// Adds `name` under `id`, which is not there yet; `reserving` sizes the first.
    @inline(__always)
    mutating func append(_ id: Int64, _ name: String, reserving: Int) {
        if entries.isEmpty { entries.reserveCapacity(reserving) }
        entries.append((id, name))
        if entries.count == 17 {
            for entry in entries { byID[entry.id] = entry.name }
        } else if entries.count > 17 {
            byID[id] = name
        }
    }
}
