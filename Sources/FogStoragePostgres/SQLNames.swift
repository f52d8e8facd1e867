import FogStorage
import Foundation

/// SQL identifiers for a store's schema and tables.
enum SQLNames {
    /// `name` quoted as an SQL identifier (double quotes doubled).
    static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The PostgreSQL table of the interface table `name`: `t_` and the name's bytes, those
    /// outside `[a-z0-9]` written `_xx` in hex (so distinct names give distinct tables). A
    /// name too long for PostgreSQL's 63-byte identifiers ends with a hash of the whole name.
    static func table(_ name: String) -> String {
        var escaped = "t_"
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                escaped.append(Character(Unicode.Scalar(byte)))
            default:
                escaped += "_" + String(byte, radix: 16).leftPadded(to: 2)
            }
        }
        guard escaped.utf8.count > 63 else { return escaped }
        // FNV-1a: stable across processes (Hasher is seeded per process).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(escaped.prefix(44)) + "_" + String(hash, radix: 16).leftPadded(to: 16)
    }

    /// The metadata table: each table's name and layout.
    static let metadata = "fog_tables"

    /// A layout as stored in the metadata table.
    static func layoutName(_ layout: TableLayout) -> String {
        switch layout {
        case .singleValue: "single"
        case .multiValue(let fixed): fixed ? "multi-fixed" : "multi"
        }
    }

    /// The layout stored as `name`, or `nil` for a name this version does not know.
    static func layout(named name: String) -> TableLayout? {
        switch name {
        case "single": .singleValue
        case "multi": .multiValue(fixedSizeValues: false)
        case "multi-fixed": .multiValue(fixedSizeValues: true)
        default: nil
        }
    }

    /// The columns and key of a table of `layout`.
    static func columns(_ layout: TableLayout) -> String {
        layout.isMultiValue ? "(k bytea NOT NULL, v bytea NOT NULL, PRIMARY KEY (k, v))" : "(k bytea PRIMARY KEY, v bytea NOT NULL)"
    }
}

extension String {
    fileprivate func leftPadded(to count: Int) -> String {
        self.count >= count ? self : String(repeating: "0", count: count - self.count) + self
    }
}
