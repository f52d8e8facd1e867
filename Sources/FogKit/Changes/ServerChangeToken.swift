import Foundation

/// A position in a change feed (CloudKit's `CKServerChangeToken`).
///
/// A token is opaque: pass the last one you received to the next fetch, and keep it
/// (it is `Codable`, and ``data`` gives its bytes). Zone tokens (from
/// ``FetchRecordZoneChangesOperation`` and ``Database/recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)``)
/// and database tokens (from ``FetchDatabaseChangesOperation`` and
/// ``Database/databaseChanges(since:resultsLimit:)``) are not interchangeable.
///
/// A token fails with ``FogError/Code/changeTokenExpired`` when its zone was deleted and
/// created again, when the deletions since it were pruned (see
/// ``Container/Configuration/tombstoneRetention``), or when it comes from another copy of the
/// store (a backup made with ``Container/Administrator/backup(to:)`` is a new copy). Start again from a
/// `nil` token then. Bytes that are not a token fail with ``FogError/Code/invalidArguments``,
/// and more than 1,024 bytes (more than any token FogKit makes) with
/// ``FogError/Code/limitExceeded``, before they are read.
///
/// Like `CKServerChangeToken`, a token supports `NSSecureCoding`, so the usual way of keeping
/// one works unchanged:
///
/// ```swift
/// let archived = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
/// let restored = try NSKeyedUnarchiver.unarchivedObject(ofClass: ServerChangeToken.self, from: archived)
/// ```
public final class ServerChangeToken: NSObject, NSSecureCoding, @unchecked Sendable, Codable {
    // Unchecked: the only stored property is an immutable `Data`.

    /// The token's bytes, to store and give back to ``init(data:)``.
    public let data: Data

    private static let coderKey = "FogKitServerChangeToken"

    /// A token from bytes that ``data`` gave. Bytes are checked when the token is used.
    public init(data: Data) {
        self.data = data
    }

    /// Tokens archive securely, as `CKServerChangeToken` does.
    public static var supportsSecureCoding: Bool { true }

    /// Archives the token's bytes.
    public func encode(with coder: NSCoder) {
        coder.encode(data as NSData, forKey: Self.coderKey)
    }

    /// Restores a token archived with ``encode(with:)``; `nil` when the coder holds none.
    public init?(coder: NSCoder) {
        guard let data = coder.decodeObject(of: NSData.self, forKey: Self.coderKey) as Data? else { return nil }
        self.data = data
    }

    /// Two tokens are equal when their bytes are.
    public override func isEqual(_ object: Any?) -> Bool { (object as? ServerChangeToken)?.data == data }

    /// The hash of the bytes.
    public override var hash: Int { data.hashValue }

    /// Decodes the token from its base64 bytes.
    public init(from decoder: any Decoder) throws {
        data = try decoder.singleValueContainer().decode(Data.self)
    }

    /// Encodes the token's bytes.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(data)
    }

    /// The token's bytes in base64, as `fog changes` prints them.
    public override var description: String { data.base64EncodedString() }
}

/// The content of a change token.
///
/// Layout: `"FK"`, format `1`, kind (`1` zone, `2` database), the store's 16-byte
/// incarnation, then for a zone its id, its creation sequence and the position (sequence,
/// row) of the last change delivered; for a database its scope, owner and the position
/// (sequence, zone id); all as varints (the owner as a length and UTF-8). An 8-byte FNV-1a
/// checksum of everything before it ends the token.
struct ChangeTokenContent: Equatable {
    enum Kind: UInt8 {
        case zone = 1
        case database = 2
    }

    var kind: Kind
    var incarnation: [UInt8]
    /// Zone tokens: the zone id and its creation sequence. Database tokens: the scope.
    var scope: Int64
    var zoneCreated: Int64
    /// Database tokens: the owner's user record name.
    var owner: String
    /// The last change delivered: (sequence, row) in a zone; (sequence, zone id) in a database.
    var sequence: Int64
    var item: Int64

    static func zone(incarnation: [UInt8], zone: Int64, created: Int64, sequence: Int64, row: Int64) -> ChangeTokenContent {
        ChangeTokenContent(
            kind: .zone, incarnation: incarnation, scope: zone, zoneCreated: created, owner: "", sequence: sequence, item: row)
    }

    static func database(incarnation: [UInt8], scope: Int, owner: String, sequence: Int64, zone: Int64) -> ChangeTokenContent {
        ChangeTokenContent(
            kind: .database, incarnation: incarnation, scope: Int64(scope), zoneCreated: 0, owner: owner, sequence: sequence, item: zone)
    }

    var token: ServerChangeToken {
        var w = ByteWriter(capacity: 64)
        w.u8(UInt8(ascii: "F"))
        w.u8(UInt8(ascii: "K"))
        w.u8(1)
        w.u8(kind.rawValue)
        w.bytes.append(contentsOf: incarnation)
        w.varint(scope)
        w.varint(zoneCreated)
        w.string(owner)
        w.varint(sequence)
        w.varint(item)
        w.u64(Self.checksum(w.bytes[...]))
        return ServerChangeToken(data: Data(w.bytes))
    }

    /// Reads a token, or throws `invalidArguments` when the bytes are not one.
    init(_ token: ServerChangeToken, expected: Kind) throws(FogError) {
        // Checked before the bytes are copied: a token larger than any FogKit makes.
        try Validation.blobSize(token.data, "the change token", limit: Validation.maximumChangeTokenSize)
        let bytes = [UInt8](token.data)
        let corrupt = FogError(
            .invalidArguments, message: "the change token is corrupt (\(bytes.count) bytes that are not a FogKit change token)")
        guard bytes.count > 28, bytes[0] == UInt8(ascii: "F"), bytes[1] == UInt8(ascii: "K"), bytes[2] == 1 else { throw corrupt }
        let body = bytes[..<(bytes.count - 8)]
        let stored = bytes[(bytes.count - 8)...].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard Self.checksum(body) == stored else { throw corrupt }
        guard let kind = Kind(rawValue: bytes[3]) else { throw corrupt }
        guard kind == expected else {
            throw FogError(
                .invalidArguments,
                message: kind == .zone
                    ? "a zone change token was given where a database token belongs"
                    : "a database change token was given where a zone token belongs")
        }
        let content: ChangeTokenContent
        do {
            content = try Array(body).withUnsafeBytes { buffer in
                var r = ByteReader(UnsafeRawBufferPointer(rebasing: buffer[20...]))
                let content = ChangeTokenContent(
                    kind: kind, incarnation: Array(bytes[4..<20]), scope: try r.int64(), zoneCreated: try r.int64(), owner: try r.string(),
                    sequence: try r.int64(), item: try r.int64())
                guard r.isAtEnd else { throw FormatError(message: "trailing bytes") }
                return content
            }
        } catch {
            throw corrupt
        }
        self = content
    }

    private init(kind: Kind, incarnation: [UInt8], scope: Int64, zoneCreated: Int64, owner: String, sequence: Int64, item: Int64) {
        self.kind = kind
        self.incarnation = incarnation
        self.scope = scope
        self.zoneCreated = zoneCreated
        self.owner = owner
        self.sequence = sequence
        self.item = item
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 { fnv1a(bytes) }
}
