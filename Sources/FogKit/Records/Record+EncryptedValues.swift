import Foundation
import Synchronization

/// Keyed access to a set of record fields (CloudKit's `CKRecordKeyValueSetting`): a
/// ``Record`` itself, and its ``Record/encryptedValues``.
public protocol RecordKeyValueSetting: AnyObject, Sendable {
    /// The value of field `key`, or `nil` when it is not set.
    subscript(key: Record.FieldKey) -> (any RecordValueProtocol)? { get set }
    /// The value of field `key`, or `nil` (CloudKit's `object(forKey:)`).
    func object(forKey key: Record.FieldKey) -> (any RecordValueProtocol)?
    /// Sets field `key` to `value`, or removes it when `value` is `nil`.
    func setObject(_ value: (any RecordValueProtocol)?, forKey key: Record.FieldKey)
    /// The keys that hold values, sorted.
    func allKeys() -> [Record.FieldKey]
    /// The keys set or removed since the record was fetched or saved, in first-change order.
    func changedKeys() -> [Record.FieldKey]
}

extension Record: RecordKeyValueSetting {}

extension Record {
    /// The reserved prefix of the stored name of an encrypted field: `encryptedValues["pin"]`
    /// is kept in the record as the field `___encrypted.pin`, a name no client key can have
    /// (a key starts with a letter and has no `.`). `Docs/OnDiskFormat.md` ("Encrypted
    /// fields") describes the stored form.
    static let encryptedKeyPrefix = "___encrypted."

    /// Whether `key` is the stored name of an encrypted field.
    ///
    /// A key whose first byte is not `_` cannot have the prefix (no other character is, or
    /// composes into, `_`): most keys are answered by that byte, without `hasPrefix`, which
    /// compares characters (about 90 instructions; a save asks 18 times per record).
    @inline(__always)
    static func isEncryptedKey(_ key: String) -> Bool {
        key.utf8.first == UInt8(ascii: "_") && key.hasPrefix(encryptedKeyPrefix)
    }

    /// The stored name of the encrypted field `key`.
    static func encryptedKey(_ key: String) -> String { encryptedKeyPrefix + key }

    /// The client key of the stored name of an encrypted field.
    static func plainKey(ofEncrypted key: String) -> String { String(key.dropFirst(encryptedKeyPrefix.count)) }

    /// The record's encrypted fields (CloudKit's `CKRecord.encryptedValues`): a key space of
    /// its own beside the record's plain fields.
    ///
    /// ```swift
    /// record.encryptedValues["diagnosis"] = "…"
    /// let diagnosis: String? = record.encryptedValues["diagnosis"]
    /// ```
    ///
    /// Every value type but assets and references (and lists of them) may be stored; a save
    /// of a record holding one fails that record with ``FogError/Code/invalidArguments``
    /// (CloudKit raises when it is set). A key names either a plain field or an encrypted
    /// field of a record type, never both; records with encrypted values cannot be saved in
    /// the public database. Encrypted fields are stored encrypted with the container's key
    /// (``Container/Configuration/encryptionKey``), never indexed, and cannot be used in
    /// predicates or sort descriptors. Fetches, queries and change feeds return them
    /// decrypted; desired keys select them by their key.
    ///
    /// ``Record/allKeys()`` and ``Record/changedKeys()`` list the plain fields only; the
    /// encrypted fields' are ``EncryptedValues/allKeys()`` and
    /// ``EncryptedValues/changedKeys()``.
    public var encryptedValues: EncryptedValues { EncryptedValues(record: self) }

    /// The encrypted fields of a record (see ``Record/encryptedValues``).
    public final class EncryptedValues: RecordKeyValueSetting, @unchecked Sendable {
        // `@unchecked`: the one stored property is a `let` of a `Sendable` class.
        /// The record whose encrypted fields these are.
        public let record: Record

        init(record: Record) { self.record = record }

        /// The value of the encrypted field `key`, or `nil` when it is not set. Numbers come
        /// back as `NSNumber`, as from the record's own subscript.
        public subscript(key: FieldKey) -> (any RecordValueProtocol)? {
            get { object(forKey: key) }
            set { setObject(newValue, forKey: key) }
        }

        /// The value of the encrypted field `key` converted to `T`, or `nil` when it is not
        /// set or does not convert.
        public subscript<T: RecordValueProtocol>(key: FieldKey) -> T? {
            get {
                guard let value = fieldValue(forKey: key) else { return nil }
                if let raw = value as? T { return raw }
                return value.bridgedValue as? T
            }
            set { setObject(newValue, forKey: key) }
        }

        /// The value of the encrypted field `key`, or `nil`.
        public func object(forKey key: FieldKey) -> (any RecordValueProtocol)? {
            fieldValue(forKey: key)?.bridgedValue
        }

        /// Sets the encrypted field `key` to `value`, or removes it when `value` is `nil`.
        /// An asset or a reference is refused when the record is saved.
        public func setObject(_ value: (any RecordValueProtocol)?, forKey key: FieldKey) {
            setFieldValue(value?.recordFieldValue, forKey: key)
        }

        /// The stored form of the encrypted field `key` (decrypted), or `nil`.
        public func fieldValue(forKey key: FieldKey) -> FieldValue? {
            record.fieldValue(forKey: Record.encryptedKey(key))
        }

        /// Sets the encrypted field `key` to `value` in its stored form, or removes it.
        public func setFieldValue(_ value: FieldValue?, forKey key: FieldKey) {
            record.setFieldValue(value, forKey: Record.encryptedKey(key))
        }

        /// The keys of the encrypted fields that hold values, sorted.
        public func allKeys() -> [FieldKey] {
            record.state.withLock { $0.keys }.filter(Record.isEncryptedKey).map(Record.plainKey(ofEncrypted:)).sorted()
        }

        /// The encrypted keys set or removed since the record was fetched or saved.
        public func changedKeys() -> [FieldKey] {
            record.state.withLock { $0.changedKeys }.filter(Record.isEncryptedKey).map(Record.plainKey(ofEncrypted:))
        }
    }
}
