import Foundation

/// A file attached to a record, the counterpart of `CKAsset`.
///
/// Create an asset from a file URL and store it in a field. When the record is
/// saved, FogKit copies the file's bytes into the container's `assets/` folder,
/// under the SHA-256 of the bytes, so identical content is stored once; the copy
/// is deleted when no record references it any more. Assets do not count toward
/// a record's 1 MB limit. On records fetched from the store, ``fileURL`` points
/// at the stored copy, which callers must treat as read-only (it may be shared
/// with other records).
public final class Asset: Sendable, Hashable, CustomStringConvertible {
    /// The file holding the asset's bytes.
    ///
    /// For a fetched asset of a store on a database server, the file is written to this
    /// process's working folder from the database the first time this is read.
    public var fileURL: URL? {
        if let storedName, let url = location { RemoteAssets.materializeIfNeeded(storedName, in: url.deletingLastPathComponent()) }
        return location
    }
    /// The file's URL (the stored copy's, once saved).
    private let location: URL?
    /// The stored copy's identifier inside the container, once saved.
    let storedName: String?
    /// The size of the stored bytes, once saved.
    let storedSize: Int64

    /// Creates an asset from the file at `fileURL`.
    ///
    /// The file must be a regular file, or a symbolic link to one, when the record is saved:
    /// a directory, a FIFO or a device fails the save with ``FogError/Code/invalidArguments``,
    /// and a missing or unreadable file with ``FogError/Code/assetFileNotFound``, before
    /// anything is copied. A file larger than ``Container/Configuration/maximumAssetSize``
    /// (50 MB by default) fails the save with ``FogError/Code/limitExceeded``.
    public init(fileURL: URL) {
        self.location = fileURL
        self.storedName = nil
        self.storedSize = 0
    }

    init(storedName: String, size: Int64, directory: URL) {
        self.storedName = storedName
        self.storedSize = size
        self.location = directory.appendingPathComponent(storedName)
    }

    /// Two assets are equal when they name the same stored copy, or (before
    /// saving) the same file.
    public static func == (lhs: Asset, rhs: Asset) -> Bool {
        if let l = lhs.storedName, let r = rhs.storedName { return l == r }
        return lhs.storedName == nil && rhs.storedName == nil && lhs.location == rhs.location
    }

    /// Hashes the stored name or file URL.
    public func hash(into hasher: inout Hasher) {
        if let storedName { hasher.combine(storedName) } else { hasher.combine(location) }
    }

    /// The file URL.
    public var description: String { "<Asset \(location?.path ?? "nil")>" }
}
