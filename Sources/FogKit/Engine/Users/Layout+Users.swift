import FogStorage
import Foundation

/// Keys of the `users` table. `Docs/OnDiskFormat.md` describes it; change both together.
///
/// | key | value |
/// |---|---|
/// | the identity as raw UTF-8 (not a tuple) | the user record name as UTF-8 |
/// | `FF` + tuple ("e", lowercased email address) | the user record name as UTF-8 |
/// | `FF` + tuple ("u", user record name) | the directory entry: tuple (Int64 `1`, identity, email address or null, name prefix, given, middle, family, suffix, nickname, each a string or null) |
///
/// No identity key starts with `FF`, a byte that UTF-8 never contains, so the directory's
/// keys sort after every identity and never collide with one: the identities are the keys
/// below ``directoryKeyPrefix``.
extension Layout {
    /// The first byte of every user directory key in `users`.
    static let directoryKeyPrefix: UInt8 = 0xFF
    /// The range of the identity keys of `users`: every key below `FF`.
    static let userIdentityRange = ScanRange(lower: nil, upper: [directoryKeyPrefix])
    /// The version of the directory entry encoding.
    static let directoryEntryVersion: Int64 = 1

    /// `users`: `FF` ("e", email key) → user record name.
    static func userEmailKey(_ emailKey: String) -> [UInt8] {
        directoryKey("e", emailKey)
    }

    /// `users`: `FF` ("u", user record name) → directory entry.
    static func userEntryKey(_ userRecordName: String) -> [UInt8] {
        directoryKey("u", userRecordName)
    }

    private static func directoryKey(_ tag: String, _ name: String) -> [UInt8] {
        var w = KeyWriter(capacity: 6 + name.utf8.count)
        w.appendRawByte(directoryKeyPrefix)
        w.append(tag)
        w.append(name)
        return w.bytes
    }
}
