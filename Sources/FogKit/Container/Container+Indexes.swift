import Foundation

extension Container {
    /// Sets the indexes of one field of a record type, replacing the ones it had
    /// (`[]` removes them all).
    ///
    /// The schema is the container's: the indexes serve every database and zone. Adding an
    /// index builds its entries for the records already stored, and removing one deletes
    /// them, in the same transaction; queries see either the old or the new indexes.
    ///
    /// ```swift
    /// try await container.setIndexes([.queryable, .sortable], forField: "score", ofRecordType: "Post")
    /// try await container.setIndexes(.searchable, forField: "title", ofRecordType: "Post")
    /// try await container.setIndexes(.queryable, forField: Record.SystemFieldKey.recordID, ofRecordType: "Post")
    /// ```
    ///
    /// System fields take indexes too: `recordName` or `recordID` (queryable; the record
    /// ID, which CloudKit's schema calls `recordName` and whole-type queries need), `creationDate` and `modificationDate` (queryable, sortable),
    /// `creatorUserRecordID`, `lastModifiedUserRecordID` and `parent` (queryable).
    ///
    /// - Throws: ``FogError`` with ``FogError/Code/invalidArguments`` for a bad record type
    ///   or field name, ``IndexOptions/searchable`` on a field that does not hold strings,
    ///   or an index on an asset field or a system field that cannot have it.
    public func setIndexes(_ options: IndexOptions, forField field: Record.FieldKey, ofRecordType recordType: Record.RecordType) async throws {
        try checkOpen()
        try await engine.setIndexes([field: options], recordType: recordType)
    }

    /// Sets the indexes of several fields of a record type at once, in one transaction;
    /// fields not named keep theirs. See ``setIndexes(_:forField:ofRecordType:)``.
    public func setIndexes(_ indexes: [Record.FieldKey: IndexOptions], ofRecordType recordType: Record.RecordType) async throws {
        try checkOpen()
        try await engine.setIndexes(indexes, recordType: recordType)
    }

    /// The indexes declared on the fields of a record type, by field name.
    public func indexes(ofRecordType recordType: Record.RecordType) throws -> [Record.FieldKey: IndexOptions] {
        try checkOpen()
        return try engine.indexes(ofRecordType: recordType)
    }

    /// The indexes that queries in the development environment lacked since this
    /// container opened, most frequent first: the index advisor.
    public func indexAdvice() -> [IndexAdvice] {
        engine.advisor.advice()
    }

    func checkOpen() throws(FogError) {
        if privateCloudDatabase.isClosed { throw FogError(.internalError, message: "the container is closed") }
    }
}
