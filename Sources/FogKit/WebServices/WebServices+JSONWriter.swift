import Foundation
import Synchronization

extension WebServices {
    /// Writes record dictionaries as compact JSON with sorted keys, several times faster than
    /// `JSONEncoder` (which `fog export` spent three quarters of its time in). The bytes are
    /// the ones ``makeEncoder()`` gives for the same dictionary.
    public struct JSONWriter: Sendable {
        /// The JSON written so far.
        public private(set) var bytes: [UInt8] = []

        /// Creates an empty writer.
        public init() { bytes.reserveCapacity(1024) }

        /// Empties the writer, keeping its capacity.
        public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

        /// Writes `record` as one JSON object; `extra` adds string-valued keys at the top level
        /// (in sorted position), such as `fog export`'s `database` and `user`.
        /// - Throws: ``FormatError`` for a double that is not finite.
        public mutating func write(_ record: RecordDictionary, extra: [(key: String, value: String?)] = []) throws(FormatError) {
            let top = TopLevel(
                recordName: record.recordName, recordType: record.recordType, recordChangeTag: record.recordChangeTag,
                created: record.created, modified: record.modified, deleted: record.deleted, zoneID: record.zoneID,
                parent: record.parent)
            try write(top, extra: extra) { writer throws(FormatError) in
                for (j, key) in record.fields.keys.sorted().enumerated() {
                    if j > 0 { writer.byte(UInt8(ascii: ",")) }
                    writer.string(key)
                    writer.byte(UInt8(ascii: ":"))
                    try writer.field(record.fields[key]!, path: "fields.\(key).value")
                }
            }
        }

        /// Writes `record` as one JSON object, without making its dictionary (a server writes
        /// one for every record it returns): the same bytes as writing
        /// `RecordDictionary(record, zoneID: zoneID, locate: locate)` with `deleted` set, and
        /// with only the fields in `desiredKeys` when they are given (encrypted fields by their
        /// plain names).
        /// - Throws: ``FormatError`` for a double that is not finite, naming the field; what
        ///   `locate` throws.
        public mutating func write(
            _ record: Record, zoneID: ZoneID? = nil, deleted: Bool? = nil, desiredKeys: Set<String>? = nil,
            locate: AssetLocator = WebServices.fileURL(of:), extra: [(key: String, value: String?)] = []
        ) throws {
            // One lock for the system fields and the values, decoded in place.
            let (system, parent, values) = record.state.withLock { state in
                var values: [(name: String, isEncrypted: Bool, value: FieldValue)] = []
                for key in state.keys {
                    guard let value = state.value(forKey: key) else { continue }
                    let isEncrypted = Record.isEncryptedKey(key)
                    let name = isEncrypted ? Record.plainKey(ofEncrypted: key) : key
                    if let desiredKeys, !desiredKeys.contains(name) { continue }
                    values.append((name, isEncrypted, value))
                }
                return (state.system, state.parent, values)
            }
            let top = TopLevel(
                recordName: record.recordID.recordName, recordType: record.recordType, recordChangeTag: system.recordChangeTag,
                created: system.creationDate.map { UserTimestamp(date: $0, userRecordName: system.creatorName) },
                modified: system.modificationDate.map { UserTimestamp(date: $0, userRecordName: system.lastModifierName) },
                deleted: deleted, zoneID: zoneID ?? ZoneID(record.recordID.zoneID),
                parent: parent.map { ParentDictionary(recordName: $0.recordID.recordName) })
            try write(top, extra: extra) { writer throws in
                for (j, field) in values.sorted(by: { $0.name < $1.name }).enumerated() {
                    if j > 0 { writer.byte(UInt8(ascii: ",")) }
                    writer.string(field.name)
                    writer.byte(UInt8(ascii: ":"))
                    let path = { "fields.\(field.name).value" }
                    var dictionary = try FieldValueDictionary(field.value, path: path(), locate: locate)
                    if field.isEncrypted { dictionary.isEncrypted = true }
                    try writer.field(dictionary, path: path())
                }
            }
        }

        /// A record dictionary's members other than its fields.
        private struct TopLevel {
            var recordName: String
            var recordType: String?
            var recordChangeTag: String?
            var created: UserTimestamp?
            var modified: UserTimestamp?
            var deleted: Bool?
            var zoneID: ZoneID?
            var parent: ParentDictionary?
        }

        /// Writes a record dictionary's members in sorted order, `extra` merged in, with
        /// `fields` writing the members of `fields`.
        private mutating func write<Failure: Error>(
            _ top: TopLevel, extra: [(key: String, value: String?)],
            fields: (inout JSONWriter) throws(Failure) -> Void
        ) throws(Failure) {
            // The members' sorted order is fixed: only the extra keys need sorting.
            var extras = extra.compactMap { member in member.value.map { (member.key, $0) } }
            if extras.count > 1 { extras.sort { $0.0 < $1.0 } }
            var next = 0
            var first = true
            byte(UInt8(ascii: "{"))
            func key(_ key: String, _ writer: inout JSONWriter) {
                while next < extras.count, extras[next].0 < key {
                    if !first { writer.byte(UInt8(ascii: ",")) }
                    writer.string(extras[next].0)
                    writer.byte(UInt8(ascii: ":"))
                    writer.string(extras[next].1)
                    first = false
                    next += 1
                }
                if !first { writer.byte(UInt8(ascii: ",")) }
                writer.string(key)
                writer.byte(UInt8(ascii: ":"))
                first = false
            }
            if let v = top.created {
                key("created", &self)
                user(v)
            }
            if let v = top.deleted {
                key("deleted", &self)
                raw(v ? "true" : "false")
            }
            key("fields", &self)
            byte(UInt8(ascii: "{"))
            try fields(&self)
            byte(UInt8(ascii: "}"))
            if let v = top.modified {
                key("modified", &self)
                user(v)
            }
            if let v = top.parent {
                key("parent", &self)
                raw("{\"recordName\":")
                string(v.recordName)
                byte(UInt8(ascii: "}"))
            }
            if let v = top.recordChangeTag {
                key("recordChangeTag", &self)
                string(v)
            }
            key("recordName", &self)
            string(top.recordName)
            if let v = top.recordType {
                key("recordType", &self)
                string(v)
            }
            if let v = top.zoneID {
                key("zoneID", &self)
                zone(v)
            }
            // Extra keys after `zoneID`.
            while next < extras.count {
                byte(UInt8(ascii: ","))
                string(extras[next].0)
                byte(UInt8(ascii: ":"))
                string(extras[next].1)
                next += 1
            }
            byte(UInt8(ascii: "}"))
        }

        private mutating func user(_ u: UserTimestamp) {
            byte(UInt8(ascii: "{"))
            if let device = u.deviceID {
                raw("\"deviceID\":")
                string(device)
                byte(UInt8(ascii: ","))
            }
            raw("\"timestamp\":")
            raw(String(u.timestamp))
            if let user = u.userRecordName {
                raw(",\"userRecordName\":")
                string(user)
            }
            byte(UInt8(ascii: "}"))
        }

        private mutating func field(_ field: FieldValueDictionary, path: @autoclosure () -> String) throws(FormatError) {
            byte(UInt8(ascii: "{"))
            var comma = false
            // Keys in sorted order, as the encoder writes them.
            if field.isEncrypted == true {
                raw("\"isEncrypted\":true")
                comma = true
            }
            if let type = field.type {
                if comma { byte(UInt8(ascii: ",")) }
                raw("\"type\":\"")
                raw(type.rawValue)
                byte(UInt8(ascii: "\""))
                comma = true
            }
            if let value = field.value {
                if comma { byte(UInt8(ascii: ",")) }
                raw("\"value\":")
                try self.value(value, path: path())
            }
            byte(UInt8(ascii: "}"))
        }

        private mutating func value(_ value: Value, path: @autoclosure () -> String) throws(FormatError) {
            switch value {
            case .string(let s): string(s)
            case .int64(let i), .timestamp(let i): raw(String(i))
            case .double(let d): try double(d, path: path())
            case .bytes(let data): string(data.base64EncodedString())
            case .location(let l):
                var keys: [(String, Double?)] = [
                    ("altitude", l.altitude), ("course", l.course), ("horizontalAccuracy", l.horizontalAccuracy), ("latitude", l.latitude),
                    ("longitude", l.longitude), ("speed", l.speed),
                ]
                keys.append(("timestamp", nil))
                keys.append(("verticalAccuracy", l.verticalAccuracy))
                byte(UInt8(ascii: "{"))
                var first = true
                for (key, number) in keys {
                    if key == "timestamp" {
                        guard let t = l.timestamp else { continue }
                        if !first { byte(UInt8(ascii: ",")) }
                        raw("\"timestamp\":")
                        raw(String(t))
                    } else {
                        guard let number else { continue }
                        if !first { byte(UInt8(ascii: ",")) }
                        string(key)
                        byte(UInt8(ascii: ":"))
                        try double(number, path: "\(path()).\(key)")
                    }
                    first = false
                }
                byte(UInt8(ascii: "}"))
            case .reference(let r):
                byte(UInt8(ascii: "{"))
                if let action = r.action {
                    raw("\"action\":\"")
                    raw(action.rawValue)
                    raw("\",")
                }
                raw("\"recordName\":")
                string(r.recordName)
                if let z = r.zoneID {
                    raw(",\"zoneID\":")
                    zone(z)
                }
                byte(UInt8(ascii: "}"))
            case .asset(let a):
                let keys: [(String, String?)] = [
                    ("downloadURL", a.downloadURL), ("fileChecksum", a.fileChecksum), ("receipt", a.receipt),
                    ("referenceChecksum", a.referenceChecksum),
                ]
                byte(UInt8(ascii: "{"))
                var first = true
                for (key, text) in keys {
                    guard let text else { continue }
                    if !first { byte(UInt8(ascii: ",")) }
                    string(key)
                    byte(UInt8(ascii: ":"))
                    string(text)
                    first = false
                }
                if let size = a.size {
                    if !first { byte(UInt8(ascii: ",")) }
                    raw("\"size\":")
                    raw(String(size))
                    first = false
                }
                if let key = a.wrappingKey {
                    if !first { byte(UInt8(ascii: ",")) }
                    raw("\"wrappingKey\":")
                    string(key)
                }
                byte(UInt8(ascii: "}"))
            case .list(let items):
                byte(UInt8(ascii: "["))
                for (i, item) in items.enumerated() {
                    if i > 0 { byte(UInt8(ascii: ",")) }
                    try self.value(item, path: "\(path())[\(i)]")
                }
                byte(UInt8(ascii: "]"))
            }
        }

        private mutating func zone(_ z: ZoneID) {
            if let owner = z.ownerRecordName {
                raw("{\"ownerRecordName\":")
                string(owner)
                raw(",\"zoneName\":")
            } else {
                raw("{\"zoneName\":")
            }
            string(z.zoneName)
            if let type = z.zoneType {
                raw(",\"zoneType\":\"")
                raw(type.rawValue)
                byte(UInt8(ascii: "\""))
            }
            byte(UInt8(ascii: "}"))
        }

        private mutating func double(_ d: Double, path: @autoclosure () -> String) throws(FormatError) {
            guard d.isFinite else { throw FormatError(field: path(), reason: "\(d) is not a finite number") }
            // JSONEncoder's form: Swift's shortest description, without a trailing ".0".
            var text = d.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            raw(text)
        }

        private mutating func byte(_ b: UInt8) { bytes.append(b) }

        private mutating func raw(_ s: String) { bytes.append(contentsOf: s.utf8) }

        private mutating func string(_ s: String) {
            bytes.append(UInt8(ascii: "\""))
            // Runs of bytes that need no escape are copied whole.
            var s = s
            s.withUTF8 { utf8 in
                var start = 0
                for i in utf8.indices {
                    let b = utf8[i]
                    guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else { continue }
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
                    escape(b)
                    start = i + 1
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
            }
            bytes.append(UInt8(ascii: "\""))
        }

        private mutating func escape(_ b: UInt8) {
            switch b {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            default:
                raw("\\u00")
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(b >> 4)])
                bytes.append(hex[Int(b & 0xF)])
            }
        }
    }
}
