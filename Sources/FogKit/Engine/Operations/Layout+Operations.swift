import FogStorage
import Foundation

/// Keys of the long-lived operations in the `users` table. `Docs/OnDiskFormat.md` describes
/// them; change both together.
///
/// | key | value |
/// |---|---|
/// | `FF` + tuple ("l", user record name, operation ID) | the operation as UTF-8 JSON (``StoredOperation``) |
///
/// The `FF` byte puts them among the user directory's keys, after every identity; the tag
/// `"l"` is used by no other directory key (`"e"`, `"u"`, `"s"`).
extension Layout {
    /// `users`: `FF` ("l", user, operation ID) → the stored operation.
    static func longLivedOperationKey(user: String, operationID: String) -> [UInt8] {
        var w = KeyWriter(capacity: 8 + user.utf8.count + operationID.utf8.count)
        w.appendRawByte(directoryKeyPrefix)
        w.append("l")
        w.append(user)
        w.append(operationID)
        return w.bytes
    }

    /// The prefix of one user's long-lived operations.
    static func longLivedOperationPrefix(user: String) -> [UInt8] {
        var w = KeyWriter(capacity: 8 + user.utf8.count)
        w.appendRawByte(directoryKeyPrefix)
        w.append("l")
        w.append(user)
        return w.bytes
    }
}
