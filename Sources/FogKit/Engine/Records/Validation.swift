import Foundation

/// CloudKit's rules for names and values, checked before anything is stored.
enum Validation {
    static let maximumNameLength = 255
    /// The largest record, in bytes of field data (assets excluded): 1 MB.
    static let maximumRecordSize = 1_000_000
    /// The most `deleteSelf` references that may point at one record.
    static let maximumDeleteSelfReferences = 750
    /// The largest `clientChangeTokenData` of a modify request (CloudKit documents none).
    static let maximumClientChangeTokenDataSize = 65_536
    /// The largest change token a caller may give back: every token FogKit makes is far
    /// smaller (a few varints, an incarnation and an owner name of at most 255 bytes).
    static let maximumChangeTokenSize = 1_024

    /// A caller-supplied blob within its documented size, or `limitExceeded`.
    static func blobSize(_ data: Data, _ what: String, limit: Int) throws(FogError) {
        guard data.count <= limit else {
            throw FogError(.limitExceeded, message: "\(what) is \(data.count) bytes; the limit is \(limit)")
        }
    }

    /// Property names of `Record` that may not be used as field keys.
    static let reservedFieldKeys: Set<String> = [
        "recordID", "recordType", "creationDate", "creatorUserRecordID", "modificationDate",
        "lastModifiedUserRecordID", "recordChangeTag", "parent", "share", "allTokens", "self",
        // CloudKit's schema name of the record ID, which index declarations accept.
        "recordName",
    ]

    /// A record name: ASCII, 1...255 characters; a leading `_` is checked by the caller
    /// (it is allowed only for records the system created).
    static func recordName(_ name: String) throws(FogError) {
        guard !name.isEmpty else { throw FogError(.invalidArguments, message: "record name is empty") }
        guard name.utf8.count <= maximumNameLength else {
            throw FogError(
                .invalidArguments, message: "record name is \(name.utf8.count) characters long; the limit is \(maximumNameLength)")
        }
        guard isPrintableASCII(name) else {
            throw FogError(.invalidArguments, message: "record name \(quoted(name)) has characters outside printable ASCII")
        }
    }

    /// A zone name: ASCII, 1...255 characters, no leading `_` (except the default zone's).
    static func zoneName(_ name: String, allowDefault: Bool) throws(FogError) {
        guard !name.isEmpty else { throw FogError(.invalidArguments, message: "zone name is empty") }
        if allowDefault && name == RecordZone.ID.defaultZoneName { return }
        guard name.utf8.count <= maximumNameLength else {
            throw FogError(.invalidArguments, message: "zone name is \(name.utf8.count) characters long; the limit is \(maximumNameLength)")
        }
        guard isPrintableASCII(name) else {
            throw FogError(.invalidArguments, message: "zone name \(quoted(name)) has characters outside printable ASCII")
        }
        guard !name.hasPrefix("_") else {
            throw FogError(.invalidArguments, message: "zone name \(quoted(name)) starts with '_', which is reserved")
        }
    }

    /// A record type: a letter, then letters, digits and underscores; at most 255.
    static func recordType(_ type: String) throws(FogError) {
        guard isIdentifier(type) else {
            throw FogError(
                .invalidArguments,
                message:
                    "record type \(quoted(type)) is invalid: it must start with a letter and contain only letters, digits and '_' (at most 255)"
            )
        }
    }

    /// A field key: a letter, then letters, digits and underscores; at most 255; not reserved.
    static func fieldKey(_ key: String) throws(FogError) {
        guard isIdentifier(key) else {
            let reason =
                key.hasPrefix("_")
                ? "keys starting with '_' are reserved"
                : "it must start with a letter and contain only letters, digits and '_' (at most 255)"
            throw FogError(.invalidArguments, message: "field key \(quoted(key)) is invalid: \(reason)")
        }
        guard !isReservedFieldKey(key) else {
            throw FogError(.invalidArguments, message: "field key \(quoted(key)) is reserved: it names a system field")
        }
    }

    static func isIdentifier(_ s: String) -> Bool {
        func isLetter(_ c: UInt8) -> Bool { (c >= 65 && c <= 90) || (c >= 97 && c <= 122) }
        return withUTF8(of: s) { utf8 in
            guard let first = utf8.first, utf8.count <= maximumNameLength, isLetter(first) else { return false }
            return utf8.allSatisfy { isLetter($0) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
        }
    }

    /// Whether every byte of `s` is printable ASCII (space to `~`).
    ///
    /// Eight bytes at a time (every save checks its record's and zone's names, 36 bytes for a
    /// UUID): a word holds a byte outside `0x20..<0x7F` when one has its high bit set, one is
    /// below `0x20`, or one is `0x7F`; the two tests are the "has a byte less than n" and "has
    /// a zero byte" word tricks, exact about whether such a byte exists for n ≤ 128.
    static func isPrintableASCII(_ s: String) -> Bool {
        withUTF8(of: s) { utf8 in
            guard let base = utf8.baseAddress else { return true }
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            let count = utf8.count
            var i = 0
            while count - i >= 8 {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let below = (word &- ones &* 0x20) & ~word & highs
                let delete = word ^ (ones &* 0x7F)
                let deletes = (delete &- ones) & ~delete & highs
                if (word & highs) | below | deletes != 0 { return false }
                i += 8
            }
            while i < count {
                guard base[i] >= 0x20 && base[i] < 0x7F else { return false }
                i += 1
            }
            return true
        }
    }

    /// Whether `key` is one of ``reservedFieldKeys``, compared with those of its length
    /// rather than hashed.
    static func isReservedFieldKey(_ key: String) -> Bool {
        reservedKeysByLength.contains(key)
    }

    private static let reservedKeysByLength = StringsByLength(reservedFieldKeys)

    /// `body` over the UTF-8 bytes of `s` in contiguous memory (a byte loop, not the
    /// string's generic view).
    private static func withUTF8<R>(of s: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var s = s
        return s.withUTF8(body)
    }

    /// A value: numbers, dates and locations finite, locations in range; references in the
    /// record's zone.
    ///
    /// NaN and infinite numbers are refused everywhere FogKit takes a number (records,
    /// predicates, sort descriptors): they have no place in the order of an index, JSON cannot
    /// carry them, and Foundation traps when it prints a NaN date.
    static func value(_ value: FieldValue, key: String, zoneID: RecordZone.ID) throws(FogError) {
        func checkDouble(_ d: Double, _ what: String) throws(FogError) {
            guard d.isFinite else {
                throw FogError(.invalidArguments, message: "field \(quoted(key)): \(what) \(d) is not a finite number")
            }
        }
        func checkDate(_ d: Date, _ what: String) throws(FogError) {
            let seconds = d.timeIntervalSinceReferenceDate
            guard seconds.isFinite else {
                throw FogError(
                    .invalidArguments, message: "field \(quoted(key)): \(what) (\(seconds) seconds since 2001) is not a finite date")
            }
        }
        func checkLocation(_ l: Location) throws(FogError) {
            if let problem = locationProblem(l) { throw FogError(.invalidArguments, message: "field \(quoted(key)): \(problem)") }
        }
        func checkReference(_ r: Record.Reference) throws(FogError) {
            try recordName(r.recordID.recordName)
            guard sameZone(r.recordID.zoneID, zoneID) else {
                throw FogError(
                    .invalidArguments,
                    message:
                        "field \(quoted(key)): a reference must point into the record's own zone \(zoneID.zoneName), not \(r.recordID.zoneID.zoneName)"
                )
            }
        }
        switch value {
        case .double(let d): try checkDouble(d, "the number")
        case .doubleList(let list): for (i, d) in list.enumerated() { try checkDouble(d, "element \(i + 1), the number") }
        case .date(let d): try checkDate(d, "the date")
        case .dateList(let list): for (i, d) in list.enumerated() { try checkDate(d, "element \(i + 1), the date") }
        case .location(let l): try checkLocation(l)
        case .locationList(let list): for l in list { try checkLocation(l) }
        case .reference(let r): try checkReference(r)
        case .referenceList(let list): for r in list { try checkReference(r) }
        default: break
        }
    }

    /// What is wrong with a location, or `nil`: coordinates out of range, or any of its
    /// numbers (altitude, accuracies, course, speed, timestamp) not finite.
    static func locationProblem(_ l: Location) -> String? {
        guard l.isValid else { return "location <\(l.latitude),\(l.longitude)> is not a valid coordinate (out of range or not finite)" }
        let numbers: [(String, Double)] = [
            ("altitude", l.altitude), ("horizontalAccuracy", l.horizontalAccuracy), ("verticalAccuracy", l.verticalAccuracy),
            ("course", l.course), ("speed", l.speed), ("timestamp", l.timestamp.timeIntervalSinceReferenceDate),
        ]
        for (name, number) in numbers where !number.isFinite {
            return "location <\(l.latitude),\(l.longitude)> has a \(name) of \(number), which is not finite"
        }
        return nil
    }

    /// Whether two zone IDs name the same zone (the owner placeholder matches any owner).
    static func sameZone(_ a: RecordZone.ID, _ b: RecordZone.ID) -> Bool {
        a.zoneName == b.zoneName
            && (a.ownerName == b.ownerName || a.ownerName == CurrentUserDefaultName || b.ownerName == CurrentUserDefaultName)
    }

    static func quoted(_ s: String) -> String {
        let shown = s.count > 40 ? String(s.prefix(40)) + "…" : s
        return "'\(shown)'"
    }
}
