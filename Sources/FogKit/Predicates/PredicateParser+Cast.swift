import Foundation

extension PredicateParser {
    /// `CAST(value, "Type")`: the literal form of values that have no literal of their own, as
    /// ``QueryPredicate/description`` prints them.
    ///
    /// - `CAST(seconds, "NSDate")`: seconds since 2001-01-01 00:00 UTC (NSPredicate's own form).
    /// - `CAST("0a1b", "NSData")`: bytes in hexadecimal (FogKit extension).
    /// - `CAST({latitude, longitude}, "CLLocation")`: a location (FogKit extension).
    /// - `CAST("name", "CKReference")` or `CAST({"name", "zone", "owner"}, "CKReference")`:
    ///   a reference to a record ID, in the default zone for the short form (FogKit extension;
    ///   `"CKRecordID"` is accepted as a synonym).
    mutating func parseCast() throws(FogError) -> PredicateOperand {
        let cast = current
        try enter(cast)
        defer { depth -= 1 }
        advance()
        try expect(.leftParen, in: "CAST")
        let operand = try parseOperand(left: false)
        try expect(.comma, in: "CAST")
        let typeToken = current
        guard case .string(let type) = typeToken.kind else {
            throw unexpected(typeToken, expecting: "a type name such as \"NSDate\" in CAST")
        }
        advance()
        try expect(.rightParen, in: "CAST")
        guard case .value(let value) = operand.operand else {
            throw fail("CAST needs a constant, not a field", operand.token)
        }
        switch type {
        case "NSDate":
            guard case .scalar(.constant(let constant)) = value, let seconds = Self.double(constant) else {
                throw fail("CAST to NSDate needs a number of seconds since 2001-01-01", operand.token)
            }
            return try rule(operand.token) { () throws(PredicateViolation) in
                try PredicateRules.operand(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            }
        case "NSData":
            guard case .scalar(.constant(.string(let hex))) = value, let data = Self.data(hex: hex) else {
                throw fail("CAST to NSData needs a string of hexadecimal digit pairs", operand.token)
            }
            return .scalar(.constant(.bytes(data)))
        case "CLLocation":
            guard case .list(let parts) = value, parts.count == 2,
                case .scalar(.constant(let latitude)) = parts[0], let latitude = Self.double(latitude),
                case .scalar(.constant(let longitude)) = parts[1], let longitude = Self.double(longitude)
            else {
                throw fail("CAST to CLLocation needs {latitude, longitude}", operand.token)
            }
            return .location(Location(latitude: latitude, longitude: longitude))
        case "CKReference", "CKRecordID":
            var names: [String] = []
            switch value {
            case .scalar(.constant(.string(let name))): names = [name]
            case .list(let parts):
                for part in parts {
                    if case .scalar(.constant(.string(let name))) = part { names.append(name) }
                }
                if names.count != parts.count { names = [] }
            default: break
            }
            guard (1...3).contains(names.count) else {
                throw fail("CAST to \(type) needs a record name or {recordName, zoneName, ownerName}", operand.token)
            }
            let zone =
                names.count == 1
                ? RecordZone.ID.default
                : RecordZone.ID(zoneName: names[1], ownerName: names.count == 3 ? names[2] : CurrentUserDefaultName)
            return .scalar(PredicateRules.reference(Record.ID(recordName: names[0], zoneID: zone)))
        default:
            throw fail("CAST to '\(type)' is not supported; FogKit reads NSDate, NSData, CLLocation and CKReference", typeToken)
        }
    }

    private static func double(_ value: FieldValue) -> Double? {
        switch value {
        case .int64(let n): Double(n)
        case .double(let d): d
        default: nil
        }
    }

    private static func data(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 65...70: c - 55
            case 97...102: c - 87
            default: nil
            }
        }
        var data = Data(capacity: digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
            data.append(high << 4 | low)
            i += 2
        }
        return data
    }
}
