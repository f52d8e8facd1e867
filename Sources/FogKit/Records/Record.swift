import Foundation
import Synchronization

/// A record: a typed set of fields plus system metadata (CloudKit's `CKRecord`).
///
/// `Record` is a class, like `CKRecord`, so CloudKit code ports as it is. It is
/// safe to share between tasks: every access is synchronised.
///
/// ```swift
/// let note = Record(recordType: "Note")
/// note["title"] = "Groceries"
/// note["pinned"] = true
/// let saved = try await database.save(note)
/// let title = saved["title"] as? String
/// ```
///
/// Setting a field records it in ``changedKeys()``; saving sends the changed
/// keys. The store validates names, types and sizes when the record is saved.
///
/// A record the store returns (from a fetch, a query or a change feed) keeps its fields and
/// its system fields as the store encoded them, and decodes a field each time it is read;
/// setting a field decodes them all first. The encoded bytes of a request's records share memory in small chunks
/// (at most 32 records' bytes and 16 KB), so a record kept long after its request keeps
/// that chunk alive until it is released or a field of it is set.
public class Record: @unchecked Sendable, CustomStringConvertible {
    /// The record's type, such as `"Note"`.
    public let recordType: RecordType
    /// The record's identifier.
    public let recordID: ID

    let state: Mutex<State>

    /// Metadata the store maintains.
    struct SystemFields: Sendable, Equatable {
        var creationDate: Date?
        var modificationDate: Date?
        /// The user record names (user record IDs are in the default zone): smaller than IDs,
        /// which every fetched record would otherwise carry twice.
        var creatorName: String?
        var lastModifierName: String?
        var creatorUserRecordID: ID? {
            get { creatorName.map { ID(recordName: $0) } }
            set { creatorName = newValue?.recordName }
        }
        var lastModifiedUserRecordID: ID? {
            get { lastModifierName.map { ID(recordName: $0) } }
            set { lastModifierName = newValue?.recordName }
        }
        /// The commit sequence the change tag derives from, for records the store returns
        /// (the tag's text is made only when read).
        var changeSequence: Int64? {
            didSet { if changeSequence != nil { changeTagText = nil } }
        }
        private var changeTagText: String?
        var share: Reference?

        init() {}

        /// The metadata of a record the store returns, in one expression (so that a caller's
        /// `let` can be moved into the record with `consume` rather than copied).
        init(
            creationDate: Date, modificationDate: Date, creatorName: String, lastModifierName: String, changeSequence: Int64,
            share: Reference?
        ) {
            self.creationDate = creationDate
            self.modificationDate = modificationDate
            self.creatorName = creatorName
            self.lastModifierName = lastModifierName
            self.changeSequence = changeSequence
            self.share = share
        }

        /// Whether the record has a change tag, without making its text.
        var hasChangeTag: Bool { changeSequence != nil || changeTagText != nil }

        var recordChangeTag: String? {
            get { changeTagText ?? changeSequence.map { String($0, radix: 36) } }
            set {
                changeTagText = newValue
                changeSequence = nil
            }
        }

        static func == (a: SystemFields, b: SystemFields) -> Bool {
            a.creationDate == b.creationDate && a.modificationDate == b.modificationDate
                && a.creatorName == b.creatorName && a.lastModifierName == b.lastModifierName
                && a.recordChangeTag == b.recordChangeTag && a.share == b.share
        }
    }

    /// What a record holds once the client made or changed it: decoded values, changed keys,
    /// the values before the changes and decoded system fields. A record the store returns
    /// with its fields still encoded, and that nobody changed, has none of it (``State/edits``),
    /// which keeps it small to make and to release; a record returned with decoded values (a
    /// share, a record with assets or encrypted fields, a save's result) keeps them here.
    struct Edits: Sendable {
        /// Decoded values; empty while ``State/encoded`` holds the fields.
        var decoded: [FieldKey: FieldValue] = [:]
        /// Keys changed since the record was fetched or saved, in first-change order.
        var changedKeys: [FieldKey] = []
        /// The values of changed keys as they were before the first change; kept only for a
        /// record with a change tag, the only kind ever reverted (``SystemFields/hasChangeTag``).
        var originalValues: [FieldKey: FieldValue?] = [:]
        var parentChanged = false
        /// The parent before its first change, kept as ``originalValues`` are (`.some(nil)`:
        /// the record had none).
        var originalParent: Reference?? = nil
        /// The system fields, once changed (``State/system``).
        var decodedSystem = SystemFields()

        /// Sets field `key` to `value` (removes it when `nil`), noting the change, and the
        /// value before it when the record has a change tag (``originalValues``): `storedTag`
        /// when its system fields are still as stored, which always have one.
        mutating func set(_ value: FieldValue?, forKey key: FieldKey, storedTag: Bool) {
            let keepsOriginal = storedTag || decodedSystem.hasChangeTag
            if keepsOriginal, originalValues.index(forKey: key) == nil { originalValues[key] = .some(decoded[key]) }
            if !changedKeys.contains(key) { changedKeys.append(key) }
            if decoded.isEmpty, value != nil {
                // Records are usually given several fields: room for them at once, instead of
                // growing (and rehashing) the dictionary at its first few sizes. (Measured in
                // round 20 of issue 14: growing instead cost W1 about 2,800 instructions per
                // record of six fields, making the room at the second field about 2,100;
                // `init(room:)` makes it in specialized code, unlike `reserveCapacity`.)
                decoded = [FieldKey: FieldValue](room: 8)
            }
            decoded[key] = value
        }
    }

    /// ``Edits`` in a box of its own, copied on write: a copy of a record's state
    /// (``copy()``) shares the box until one of them changes.
    ///
    /// `@unchecked Sendable`: the box is changed only through ``State/edits``, by the one
    /// state that holds it (`isKnownUniquelyReferenced`; a shared box is copied first), while
    /// that state is under an exclusive access the compiler checks (a record's state is
    /// changed under its lock). A shared box is only read, as an array's shared buffer is.
    ///
    /// `@exclusivity(unchecked)`: the exclusive access to the state that holds the box covers
    /// every access to its value, so checking the box again at run time finds nothing and
    /// cost about 3,000 instructions per record built by hand with six fields
    /// (`swift_beginAccess` on every access).
    final class EditsBox: @unchecked Sendable {
        @exclusivity(unchecked) fileprivate(set) var value: Edits
        init(_ value: Edits) { self.value = value }
    }

    struct State: Sendable {
        /// The fields as the store returned them, decoded when read; `nil` once a field is
        /// set (``materialize()``) and for records made by the client.
        var encoded: EncodedFields?
        /// The system fields of a record the store returns, decoded when read (``system``).
        var storedSystem: StoredSystemFields?
        var parent: Reference?
        /// What the client made or changed; `nil` until then (read and changed through
        /// ``edits`` and the properties below, which make it when changed, and copy it when
        /// shared: nothing else may change it).
        fileprivate(set) var editsBox: EditsBox?

        /// What the client made or changed, empty when nothing; changing it copies a shared box.
        var edits: Edits {
            get { editsBox?.value ?? Edits() }
            _modify {
                if editsBox == nil {
                    editsBox = EditsBox(Edits())
                } else if !isKnownUniquelyReferenced(&editsBox!) {
                    editsBox = EditsBox(editsBox!.value)
                }
                yield &editsBox!.value
            }
        }

        /// Decoded values; empty while ``encoded`` holds the fields.
        var decoded: [FieldKey: FieldValue] {
            get { editsBox?.value.decoded ?? [:] }
            _modify { yield &edits.decoded }
        }
        /// Keys changed since the record was fetched or saved, in first-change order.
        var changedKeys: [FieldKey] {
            get { editsBox?.value.changedKeys ?? [] }
            _modify { yield &edits.changedKeys }
        }
        /// The values of changed keys before their first change (``Edits/originalValues``).
        var originalValues: [FieldKey: FieldValue?] {
            get { editsBox?.value.originalValues ?? [:] }
            _modify { yield &edits.originalValues }
        }
        var parentChanged: Bool {
            get { editsBox?.value.parentChanged ?? false }
            _modify { yield &edits.parentChanged }
        }
        /// The parent before its first change (``Edits/originalParent``).
        var originalParent: Reference?? {
            get { editsBox?.value.originalParent ?? nil }
            _modify { yield &edits.originalParent }
        }
        /// The system fields, once changed; before that, a record the store returns keeps
        /// them as stored (``storedSystem``). Read and set through ``system``.
        var decodedSystem: SystemFields {
            get { editsBox?.value.decodedSystem ?? SystemFields() }
            _modify { yield &edits.decodedSystem }
        }

        /// The system fields; setting one (or all) keeps them decoded from then on.
        var system: SystemFields {
            get { storedSystem?.decoded ?? decodedSystem }
            set {
                decodedSystem = newValue
                storedSystem = nil
            }
        }

        /// Whether the record has a change tag (``SystemFields/hasChangeTag``), without
        /// decoding stored system fields.
        var hasChangeTag: Bool { storedSystem != nil || editsBox?.value.decodedSystem.hasChangeTag == true }

        /// The change tag (``SystemFields/recordChangeTag``), without decoding the other
        /// stored system fields.
        var recordChangeTag: String? { storedSystem?.recordChangeTag ?? editsBox?.value.decodedSystem.recordChangeTag }

        func value(forKey key: FieldKey) -> FieldValue? {
            // Optional chaining reads the encoded fields in place; `if let` would copy them
            // (retaining and releasing their chunk and name table) on every field read.
            guard encoded != nil else { return editsBox?.value.decoded[key] }
            return encoded?.value(forKey: key)
        }

        /// Every field, decoded.
        var values: [FieldKey: FieldValue] { encoded?.allValues() ?? decoded }

        var keys: [FieldKey] { encoded?.keys ?? Array(decoded.keys) }

        /// Forgets the changes (changed keys, the values and parent before them), keeping the
        /// values: what a record a save returns, or the ancestor of a conflict, holds.
        mutating func forgetChanges() {
            guard editsBox != nil else { return }
            edits.changedKeys = []
            edits.originalValues = [:]
            edits.parentChanged = false
            edits.originalParent = nil
        }

        /// Decodes the stored fields into ``decoded`` before a change.
        mutating func materialize() {
            // Moved out, not copied (a copy retains and releases the chunk and the name table).
            guard let encoded = encoded.take() else { return }
            decoded = encoded.allValues()
        }
    }

    /// Creates a new, unsaved record of `recordType`; the ID defaults to a UUID
    /// name in the default zone.
    public init(recordType: RecordType, recordID: ID = ID()) {
        self.recordType = recordType
        self.recordID = recordID
        self.state = Mutex(State())
    }

    /// Creates a new, unsaved record with a UUID name in `zoneID`.
    public convenience init(recordType: RecordType, zoneID: RecordZone.ID) {
        self.init(recordType: recordType, recordID: ID(zoneID: zoneID))
    }

    /// A record as the store returns it: no changed keys.
    init(recordType: RecordType, recordID: ID, values: [FieldKey: FieldValue], parent: Reference?, system: SystemFields) {
        self.recordType = recordType
        self.recordID = recordID
        self.state = Mutex(State(parent: parent, editsBox: EditsBox(Edits(decoded: values, decodedSystem: system))))
    }

    /// A record as the store returns it, its fields and system fields still encoded.
    init(
        recordType: RecordType, recordID: consuming ID, encoded: consuming EncodedFields?, parent: consuming Reference?,
        system: consuming StoredSystemFields
    ) {
        self.recordType = recordType
        self.recordID = recordID
        self.state = Mutex(State(encoded: consume encoded, storedSystem: consume system, parent: consume parent))
    }

    // MARK: - System fields

    /// When the record was first saved; `nil` until then.
    public var creationDate: Date? { state.withLock { $0.system.creationDate } }
    /// When the record was last saved; `nil` until then.
    public var modificationDate: Date? { state.withLock { $0.system.modificationDate } }
    /// The user record ID of the user who created the record.
    public var creatorUserRecordID: ID? { state.withLock { $0.system.creatorUserRecordID } }
    /// The user record ID of the user who saved the record last.
    public var lastModifiedUserRecordID: ID? { state.withLock { $0.system.lastModifiedUserRecordID } }
    /// The store's version tag of the record; changes on every save, `nil` until
    /// the first. Saving with ``RecordSavePolicy/ifServerRecordUnchanged`` compares it.
    public var recordChangeTag: String? { state.withLock { $0.recordChangeTag } }
    /// The share that holds the record, if any.
    public var share: Reference? { state.withLock { $0.system.share } }

    /// The record's parent, which defines sharing hierarchies. The reference's action
    /// must be ``ReferenceAction/none``; the store rejects other actions and
    /// parents that do not exist.
    public var parent: Reference? {
        get { state.withLock { $0.parent } }
        set {
            state.withLock { state in
                // Kept, as a field's value before its change is, to revert a fetched record.
                if !state.parentChanged, state.hasChangeTag { state.originalParent = .some(state.parent) }
                state.parent = newValue
                state.parentChanged = true
            }
        }
    }

    /// Sets the parent to `parentRecord` (with action `none`), or removes it.
    public func setParent(_ parentRecord: Record?) {
        parent = parentRecord.map { Reference(record: $0, action: .none) }
    }

    /// Sets the parent to the record with `parentRecordID` (with action `none`), or removes it.
    public func setParent(_ parentRecordID: ID?) {
        parent = parentRecordID.map { Reference(recordID: $0, action: .none) }
    }

    // MARK: - Fields

    /// The value of the field `key`, or `nil` when it is not set.
    ///
    /// Numbers come back as `NSNumber`, so `record["count"] as? Int` works as in CloudKit.
    public subscript(key: FieldKey) -> (any RecordValueProtocol)? {
        get { object(forKey: key) }
        set { setObject(newValue, forKey: key) }
    }

    /// The value of the field `key` converted to `T`, or `nil` when it is not set or
    /// does not convert.
    public subscript<T: RecordValueProtocol>(key: FieldKey) -> T? {
        get {
            guard let value = fieldValue(forKey: key) else { return nil }
            if let raw = value as? T { return raw }
            return value.bridgedValue as? T
        }
        set { setObject(newValue, forKey: key) }
    }

    /// The value of the field `key`, or `nil` (CloudKit's `object(forKey:)`).
    public func object(forKey key: FieldKey) -> (any RecordValueProtocol)? {
        fieldValue(forKey: key)?.bridgedValue
    }

    /// Sets the field `key` to `value`, or removes it when `value` is `nil`.
    public func setObject(_ value: (any RecordValueProtocol)?, forKey key: FieldKey) {
        setFieldValue(value?.recordFieldValue, forKey: key)
    }

    /// The value of the field `key` (the key-value-coding spelling CloudKit code uses).
    public func value(forKey key: FieldKey) -> (any RecordValueProtocol)? {
        object(forKey: key)
    }

    /// Sets the field `key` to `value`, or removes it when `nil` (the key-value-coding
    /// spelling CloudKit code uses).
    public func setValue(_ value: (any RecordValueProtocol)?, forKey key: FieldKey) {
        setObject(value, forKey: key)
    }

    /// The stored form of the field `key`, or `nil` when it is not set.
    public func fieldValue(forKey key: FieldKey) -> FieldValue? {
        state.withLock { $0.value(forKey: key) }
    }

    /// Sets the field `key` to `value` in its stored form, or removes it when `nil`.
    public func setFieldValue(_ value: FieldValue?, forKey key: FieldKey) {
        state.withLock { state in
            state.materialize()
            // The values before the change are read only to revert a record that has a change
            // tag (the ancestor a conflict compares, `ClientRecord.ancestor()`), and a record's
            // tag never changes: a new record keeps none (a dictionary and two hashes per field).
            let storedTag = state.storedSystem != nil
            state.edits.set(value, forKey: key, storedTag: storedTag)
        }
    }

    /// The keys that hold values, sorted; the encrypted fields are not among them
    /// (``EncryptedValues/allKeys()`` lists those).
    public func allKeys() -> [FieldKey] {
        state.withLock { $0.keys }.filter { !Record.isEncryptedKey($0) }.sorted()
    }

    /// The keys set or removed since the record was fetched or saved; the encrypted fields'
    /// are in ``EncryptedValues/changedKeys()``.
    public func changedKeys() -> [FieldKey] {
        state.withLock { $0.changedKeys }.filter { !Record.isEncryptedKey($0) }
    }

    /// Every whitespace-separated token of the record's string fields.
    public func allTokens() -> [String] {
        let values = state.withLock { $0.values }
        do {
            var tokens: [String] = []
            for key in values.keys.sorted() where !Record.isEncryptedKey(key) {
                switch values[key] {
                case .string(let s): tokens += s.split(whereSeparator: \.isWhitespace).map(String.init)
                case .stringList(let list):
                    for s in list { tokens += s.split(whereSeparator: \.isWhitespace).map(String.init) }
                default: break
                }
            }
            return tokens
        }
    }

    /// A copy of the record with the same ID, fields, metadata and changed keys.
    public func copy() -> Record {
        let copy = Record(recordType: recordType, recordID: recordID)
        let snapshot = state.withLock { $0 }
        copy.state.withLock { $0 = snapshot }
        return copy
    }

    /// The type, name and fields.
    public var description: String {
        let s = state.withLock { $0 }
        let values = s.values
        // Encrypted fields are shown by key only.
        let fields = values.keys.sorted().map {
            Record.isEncryptedKey($0) ? "\($0)=<encrypted>" : "\($0)=\(values[$0]!)"
        }.joined(separator: ", ")
        return "<Record \(recordType) \(recordID.recordName) tag=\(s.recordChangeTag ?? "nil") {\(fields)}>"
    }
}
