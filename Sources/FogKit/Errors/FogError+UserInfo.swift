import Foundation

// CloudKit's user-info keys without their `CK` prefix, so error handling written against
// `CKError.userInfo` ports by renaming:
//
//     if let partial = error.userInfo[PartialErrorsByItemIDKey] as? [Record.ID: any Error] { … }

/// CloudKit's error domain, `"CKErrorDomain"` (CloudKit's `CKErrorDomain`).
public let ErrorDomain = FogError.errorDomain

/// The user-info key of a partial failure's per-item errors, a dictionary from item ID
/// (`Record.ID`, `RecordZone.ID`, subscription ID, `URL`, …) to error (CloudKit's
/// `CKPartialErrorsByItemIDKey`, `"CKPartialErrors"`).
public let PartialErrorsByItemIDKey = "CKPartialErrors"

/// The user-info key of the stored record on `serverRecordChanged` (CloudKit's
/// `CKRecordChangedErrorServerRecordKey`).
public let RecordChangedErrorServerRecordKey = "ServerRecord"

/// The user-info key of the record the caller tried to save on `serverRecordChanged`
/// (CloudKit's `CKRecordChangedErrorClientRecordKey`).
public let RecordChangedErrorClientRecordKey = "ClientRecord"

/// The user-info key of the record as the caller last fetched it on `serverRecordChanged`
/// (CloudKit's `CKRecordChangedErrorAncestorRecordKey`).
public let RecordChangedErrorAncestorRecordKey = "AncestorRecord"

/// The user-info key of the seconds to wait before retrying, a `Double` (CloudKit's
/// `CKErrorRetryAfterKey`, `"CKRetryAfter"`).
public let ErrorRetryAfterKey = "CKRetryAfter"

/// The user-info key CloudKit sets on `zoneNotFound` after a user reset their encrypted
/// data (CloudKit's `CKErrorUserDidResetEncryptedDataKey`). FogKit has no keychain to
/// reset and never sets it; the constant exists so that code reading it compiles.
public let ErrorUserDidResetEncryptedDataKey = "CKErrorUserDidResetEncryptedData"

/// The user-info key of the message that says what failed and where (CloudKit's
/// `"ServerErrorDescription"`).
public let ServerErrorDescriptionKey = "ServerErrorDescription"

extension FogError {
    /// The error's user info, as `CKError.userInfo` gives it: read the per-item errors of
    /// a partial failure with ``PartialErrorsByItemIDKey``,
    ///
    /// ```swift
    /// if let byID = error.userInfo[PartialErrorsByItemIDKey] as? [Record.ID: any Error] { … }
    /// ```
    ///
    /// or, more simply, ``partialErrorsByItemID``.
    public var userInfo: [String: Any] { errorUserInfo }

    /// Creates an error from a code and a CloudKit-style user info, as `CKError(_:userInfo:)`
    /// does; the keys above fill the typed properties (a test double can throw what
    /// CloudKit would).
    public init(_ code: Code, userInfo: [String: Any]) {
        let retry: Double? =
            (userInfo[ErrorRetryAfterKey] as? Double) ?? (userInfo[ErrorRetryAfterKey] as? NSNumber)?.doubleValue
        self.init(
            code,
            message: userInfo[ServerErrorDescriptionKey] as? String ?? userInfo[NSLocalizedDescriptionKey] as? String ?? "",
            partialErrorsByItemID: userInfo[PartialErrorsByItemIDKey] as? [AnyHashable: any Error],
            serverRecord: userInfo[RecordChangedErrorServerRecordKey] as? Record,
            clientRecord: userInfo[RecordChangedErrorClientRecordKey] as? Record,
            ancestorRecord: userInfo[RecordChangedErrorAncestorRecordKey] as? Record,
            retryAfterSeconds: retry,
            underlyingError: userInfo[NSUnderlyingErrorKey] as? any Error)
    }
}
