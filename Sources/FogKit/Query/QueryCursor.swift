import Foundation

extension QueryOperation {
    /// Where a query's results left off (CloudKit's `CKQueryOperation.Cursor`).
    public typealias Cursor = QueryCursor
}

/// Where a query's results left off (CloudKit's `CKQueryOperation.Cursor`, `CKQueryCursor` in
/// Objective-C); usually named ``QueryOperation/Cursor``.
///
/// It is a top-level class so that `NSKeyedArchiver` can name it on Linux.
///
/// A cursor holds the query, its zone (or that it searches every zone) and the position of
/// the last record returned —
/// the sort values and the record's place among equal ones — not an offset. Continuing
/// from it runs the query again and returns the records after that position, so records
/// saved or deleted in between neither shift the results nor repeat them: a record
/// appears twice only if its sort values changed so that it moved past the position.
///
/// Cursors have no public initializer. An app can keep one with `NSKeyedArchiver` (they
/// support `NSSecureCoding`, as `CKQueryOperation.Cursor` does) or as `Codable`; decoding
/// checks the content, and a cursor that does not decode is refused.
public final class QueryCursor: NSObject, NSSecureCoding, @unchecked Sendable, Codable {
    // Unchecked: the only stored property is an immutable value.
    let state: QueryCursorState

    private static let coderKey = "FogKitQueryCursor"

    init(state: QueryCursorState) {
        self.state = state
    }

    /// Cursors archive securely, as `CKQueryOperation.Cursor` does.
    public static var supportsSecureCoding: Bool { true }

    /// Archives the cursor.
    public func encode(with coder: NSCoder) {
        guard let data = try? JSONEncoder().encode(state) else { return }
        coder.encode(data as NSData, forKey: Self.coderKey)
    }

    /// Restores a cursor archived with ``encode(with:)``; `nil` when the coder holds none or
    /// its content is not a valid cursor.
    public init?(coder: NSCoder) {
        guard let data = coder.decodeObject(of: NSData.self, forKey: Self.coderKey) as Data?,
            let state = try? JSONDecoder().decode(QueryCursorState.self, from: data), (try? state.validated()) != nil
        else { return nil }
        self.state = state
    }

    /// The zone the query runs in; for a query with no zone, which searches every zone of
    /// the database, the zone of the last record returned.
    public var zoneID: RecordZone.ID { state.zoneID }

    /// Decodes a cursor an app stored.
    public init(from decoder: any Decoder) throws {
        let state = try QueryCursorState(from: decoder)
        do {
            _ = try state.validated()
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(error)", underlyingError: error))
        }
        self.state = state
    }

    /// Encodes the cursor.
    public func encode(to encoder: any Encoder) throws {
        try state.encode(to: encoder)
    }

    /// Two cursors are equal when they continue the same query from the same position.
    public override func isEqual(_ object: Any?) -> Bool { (object as? QueryCursor)?.state == state }

    /// The hash of the cursor's content.
    public override var hash: Int { state.hashValue }

    /// `<Cursor Post in Notes after 3f2a…>`.
    public override var description: String {
        "<Cursor \(state.recordType) in \(state.allZones == true ? "every zone" : state.zoneName) after \(state.position.prefix(8).map { String(format: "%02x", $0) }.joined())…>"
    }
}

/// The content of a cursor: everything needed to run the query again from a position.
struct QueryCursorState: Sendable, Hashable, Codable {
    var recordType: String
    /// The predicate; encoded as its canonical text (``QueryPredicate/description``).
    var predicate: CursorPredicate
    /// The order the results follow: the query's sort descriptors or, without them, the
    /// order the plan chose, so that continuing uses the same order.
    var order: [Query.SortDescriptor]
    var zoneName: String
    var ownerName: String
    /// The order key of the last record returned.
    var position: Data
    /// Whose query it is: the user record name of the user who ran it (empty for nobody),
    /// and the database's scope. A cursor continues only for them (`nil` in cursors archived
    /// before FogKit recorded it).
    var holder: String?
    var scope: Int?
    /// Whether the query searches every zone of the database (it was run with no zone);
    /// then ``zoneName`` is the zone of the last record returned, and the position holds
    /// across zones. `nil` (false) in cursors of one zone, and in those archived before
    /// FogKit searched every zone.
    var allZones: Bool? = nil

    /// Throws `invalidArguments` unless the cursor was taken by `user` in `scope`.
    func checkHolder(user: String?, scope: Database.Scope) throws(FogError) {
        guard let holder else { return }
        guard holder == (user ?? ""), self.scope == scope.rawValue else {
            throw FogError(
                .invalidArguments, message: "the query cursor belongs to another user or database; run the query again from the start")
        }
    }

    var zoneID: RecordZone.ID { RecordZone.ID(zoneName: zoneName, ownerName: ownerName) }

    /// The query the cursor continues, or an error when the cursor was tampered with.
    func validated() throws(FogError) -> Query {
        do {
            try Validation.recordType(recordType)
            let query = Query(recordType: recordType, predicate: try predicate.parsed())
            for sort in order where !Validation.isIdentifier(sort.key) {
                throw FogError(.invalidArguments, message: "sort key \(Validation.quoted(sort.key)) is invalid")
            }
            query.sortDescriptors = order
            return query
        } catch {
            throw FogError(.invalidArguments, message: "the query cursor is corrupt: \(FogError.wrapping(error).message)")
        }
    }
}
