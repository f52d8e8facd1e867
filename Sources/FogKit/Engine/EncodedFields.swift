import Foundation

/// The field names, zone and asset folder that the records of one request share.
///
/// Records decoded by one fetch, query page or change batch refer to it, so each record
/// holds name ids (small integers) and the names themselves are looked up once per
/// request. It is filled while the request decodes, inside its read transaction, and only
/// read afterwards.
final class FieldNameTable: @unchecked Sendable {
    /// The name cache as the request last saw it (a copy-on-write value: holding it costs
    /// nothing until the cache grows).
    private var snapshot: NameCache.Snapshot
    /// Names the cache could not take (read inside a write transaction).
    private var extra: [(id: Int64, name: String)] = []
    let zoneID: RecordZone.ID
    let assetDirectory: URL

    init(zoneID: RecordZone.ID, assetDirectory: URL, names: NameResolver) {
        self.zoneID = zoneID
        self.assetDirectory = assetDirectory
        snapshot = names.snapshot
    }

    /// Makes sure the name of `id` is known.
    @inline(__always)
    func register(_ id: Int64, names resolver: inout NameResolver) throws {
        let index = Int(id)
        if index >= 0, index < snapshot.names.count, snapshot.names[index] != nil { return }
        if extra.contains(where: { $0.id == id }) { return }
        let name = try resolver.name(id)
        snapshot = resolver.snapshot
        if snapshot.ids[name] != id { extra.append((id, name)) }
    }

    func id(of name: String) -> Int64? {
        if let id = snapshot.ids[name] { return id }
        return extra.first { $0.name == name }?.id
    }

    func name(of id: Int64) -> String? {
        let index = Int(id)
        if index >= 0, index < snapshot.names.count, let name = snapshot.names[index] { return name }
        return extra.first { $0.id == id }?.name
    }
}

/// A record's fields as stored: the field table and payloads of its encoding, copied out
/// of the read transaction, decoded one field at a time when read.
///
/// A fetched ``Record`` keeps this instead of a dictionary of values, so that fetching
/// costs one copy per record and the fields a caller never reads are never decoded. The
/// bytes were checked when copied (``RecordView/init(_:)``), so decoding cannot fail.
/// Setting a field turns the record's fields into a dictionary first.
final class EncodedFields: @unchecked Sendable {
    private let bytes: [UInt8]
    private let count: Int
    private let tableStart: Int
    private let payloadStart: Int
    /// The fields the request asked for (desired keys); others are not there.
    private let selection: FieldSelection
    private let table: FieldNameTable

    /// Copies the fields of `view` that `selection` keeps, registering their names in `table`.
    init(_ view: RecordView, selection: FieldSelection, table: FieldNameTable, names: inout NameResolver) throws {
        let base = view.fieldsStart
        bytes = Array(UnsafeRawBufferPointer(rebasing: view.buffer[base...]))
        count = view.count
        tableStart = view.tableStart - base
        payloadStart = view.payloadStart - base
        self.selection = selection
        self.table = table
        var error: (any Error)?
        RecordView.forEachField(view.buffer, count: view.count, tableStart: view.tableStart, payloadStart: view.payloadStart) { id, _, _ in
            guard selection.contains(id) else { return true }
            do { try table.register(id, names: &names) } catch let e {
                error = e
                return false
            }
            return true
        }
        if let error { throw error }
    }

    @inline(__always)
    private func forEachField(_ body: (Int64, FieldType, UnsafeRawBufferPointer) -> Bool) {
        bytes.withUnsafeBytes { buffer in
            RecordView.forEachField(buffer, count: count, tableStart: tableStart, payloadStart: payloadStart) { id, type, payload in
                guard selection.contains(id) else { return true }
                return body(id, type, payload)
            }
        }
    }

    private func decode(_ type: FieldType, _ payload: UnsafeRawBufferPointer) -> FieldValue? {
        guard let value = try? RecordCodec.decodePayload(payload, type: type) else { return nil }
        return value.needsResolution ? value.resolved(zoneID: table.zoneID, assetDirectory: table.assetDirectory) : value
    }

    /// The value of field `key`, decoded now; `nil` when the record does not have it.
    func value(forKey key: String) -> FieldValue? {
        guard let id = table.id(of: key) else { return nil }
        var value: FieldValue?
        forEachField { fieldID, type, payload in
            guard fieldID == id else { return true }
            value = decode(type, payload)
            return false
        }
        return value
    }

    /// The names of the fields present.
    var keys: [String] {
        var keys: [String] = []
        forEachField { id, _, _ in
            if let name = table.name(of: id) { keys.append(name) }
            return true
        }
        return keys
    }

    /// Every field present, decoded.
    func allValues() -> [String: FieldValue] {
        var values: [String: FieldValue] = [:]
        values.reserveCapacity(count)
        forEachField { id, type, payload in
            if let name = table.name(of: id), let value = decode(type, payload) { values[name] = value }
            return true
        }
        return values
    }
}
