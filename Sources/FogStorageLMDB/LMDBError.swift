internal import CLMDB
internal import CLMDBGuard
import FogStorage
import Foundation

/// An error code reported by LMDB.
///
/// `FogStorageLMDB` throws ``StorageError``s, never these: ``storageError`` is the
/// translation. `LMDBError` wraps LMDB's integer return codes: the negative `MDB_*` codes
/// and plain `errno` values (for example `ENOSPC` or `EACCES`). Match on the
/// static members:
///
/// Codes that can only mean a bug in FogStorage itself (a bad transaction or
/// table handle) are not thrown: they stop the program with a precondition
/// failure instead.
public struct LMDBError: Error, Hashable, Sendable, RawRepresentable, CustomStringConvertible {
    /// The raw LMDB or `errno` code.
    public let rawValue: Int32

    /// Creates an error from a raw LMDB or `errno` code.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `MDB_KEYEXIST`: the key/data pair already exists (with a no-overwrite flag).
    public static let keyExists = LMDBError(rawValue: MDB_KEYEXIST)
    /// `MDB_NOTFOUND`: the key was not found.
    public static let notFound = LMDBError(rawValue: MDB_NOTFOUND)
    /// `MDB_PAGE_NOTFOUND`: a requested page was not found; the file is corrupted.
    public static let pageNotFound = LMDBError(rawValue: MDB_PAGE_NOTFOUND)
    /// `MDB_CORRUPTED`: a located page was the wrong type; the file is corrupted.
    public static let corrupted = LMDBError(rawValue: MDB_CORRUPTED)
    /// `MDB_PANIC`: an update failed fatally; the environment must be reopened.
    public static let panic = LMDBError(rawValue: MDB_PANIC)
    /// `MDB_VERSION_MISMATCH`: the file was written by an incompatible LMDB version.
    public static let versionMismatch = LMDBError(rawValue: MDB_VERSION_MISMATCH)
    /// `MDB_INVALID`: the file is not an LMDB data file.
    public static let invalidFile = LMDBError(rawValue: MDB_INVALID)
    /// `MDB_MAP_FULL`: the map size is reached. FogStorage grows the map and retries;
    /// callers do not see this code.
    public static let mapFull = LMDBError(rawValue: MDB_MAP_FULL)
    /// `MDB_DBS_FULL`: too many tables are open.
    public static let tablesFull = LMDBError(rawValue: MDB_DBS_FULL)
    /// `MDB_READERS_FULL`: every reader slot is taken.
    public static let readersFull = LMDBError(rawValue: MDB_READERS_FULL)
    /// `MDB_TXN_FULL`: the transaction holds too many dirty pages.
    public static let transactionFull = LMDBError(rawValue: MDB_TXN_FULL)
    /// `MDB_CURSOR_FULL`: the cursor stack is too deep (internal error).
    public static let cursorFull = LMDBError(rawValue: MDB_CURSOR_FULL)
    /// `MDB_PAGE_FULL`: a page has no more space (internal error).
    public static let pageFull = LMDBError(rawValue: MDB_PAGE_FULL)
    /// `MDB_MAP_RESIZED`: another process grew the map beyond this one's size.
    public static let mapResized = LMDBError(rawValue: MDB_MAP_RESIZED)
    /// `MDB_INCOMPATIBLE`: the operation does not fit the table's flags.
    public static let incompatible = LMDBError(rawValue: MDB_INCOMPATIBLE)
    /// `MDB_BAD_RSLOT`: a reader slot was misused.
    public static let badReaderSlot = LMDBError(rawValue: MDB_BAD_RSLOT)
    /// `MDB_BAD_VALSIZE`: a key or value has an unsupported size (an empty key, or a key
    /// longer than LMDB's maximum of 511 bytes).
    public static let badValueSize = LMDBError(rawValue: MDB_BAD_VALSIZE)
    /// A guarded LMDB call met a damaged page: one past the end of the file, at a wild
    /// address, or of the wrong kind (the fault or LMDB's assertion ended the call, not the
    /// process). The transaction is rolled back.
    public static let damaged = LMDBError(rawValue: FOG_MDB_DAMAGED)
    /// The environment was closed before the call.
    public static let environmentClosed = LMDBError(rawValue: -1)

    /// LMDB's description of the code (`mdb_strerror`).
    public var description: String {
        if self == .environmentClosed { return "the environment is closed" }
        if self == .damaged {
            return "the data file is damaged: a page it refers to is past the end of the file or not of the kind expected"
        }
        return String(cString: mdb_strerror(rawValue))
    }

    /// The backend-neutral error for this code. A bad key or value size becomes
    /// ``StorageError/keyTooLarge``; callers that know the key refine it with
    /// ``storageError(keyCount:)``.
    public var storageError: StorageError {
        switch self {
        case .environmentClosed: .closed
        case .notFound: .notFound
        case .keyExists: .keyExists
        case .mapFull, .tablesFull, .transactionFull, .cursorFull, .pageFull: .full
        case .readersFull: .temporarilyUnavailable("every reader slot of the store is taken")
        case .pageNotFound, .corrupted, .panic: .corrupted("LMDB: \(description)")
        case .damaged: .corrupted(description)
        case .versionMismatch, .invalidFile, .incompatible: .incompatible
        case .badValueSize: .keyTooLarge
        default:
            rawValue == ENOSPC ? .full : .other("LMDB: \(description)")
        }
    }

    /// ``storageError`` for a call with a key of `keyCount` bytes: tells an empty key,
    /// a long key and a long value apart when LMDB reports a bad size.
    public func storageError(keyCount: Int) -> StorageError {
        guard self == .badValueSize else { return storageError }
        if keyCount == 0 { return .emptyKey }
        return keyCount > LMDBStore.maximumKeySize ? .keyTooLarge : .valueTooLarge
    }

    /// Lets `catch LMDBError.notFound` match an error that holds this code.
    public static func ~= (lhs: LMDBError, rhs: any Error) -> Bool {
        (rhs as? LMDBError) == lhs
    }
}
