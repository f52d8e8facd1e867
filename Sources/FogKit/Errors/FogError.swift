import Foundation

/// The error FogKit throws, mirroring CloudKit's `CKError`.
///
/// ``code`` takes the same values as `CKError.Code`, one for one, and the
/// error carries the same extras: per-item errors of a partial failure, the
/// server, client and ancestor records of a save conflict, and a retry delay.
///
/// ```swift
/// do {
///     try await database.save(record)
/// } catch let error as FogError where error.code == .serverRecordChanged {
///     let server = error.serverRecord   // merge into this one and save again
/// }
/// ```
public struct FogError: Error, @unchecked Sendable, CustomStringConvertible, LocalizedError {
    // Unchecked: `partialErrorsByItemID` is typed `[AnyHashable: any Error]` as in
    // CloudKit; FogKit only puts Sendable IDs and errors in it.
    /// What went wrong.
    public let code: Code
    /// A message for people, naming what and where.
    public let message: String
    /// The errors of the items that failed, keyed by `Record.ID`, `RecordZone.ID`
    /// or another item ID, on ``Code/partialFailure``.
    public let partialErrorsByItemID: [AnyHashable: any Error]?
    /// The record as stored, on ``Code/serverRecordChanged``.
    public let serverRecord: Record?
    /// The record the caller tried to save, on ``Code/serverRecordChanged``.
    public let clientRecord: Record?
    /// The record as the caller last fetched it, before its local changes, on
    /// ``Code/serverRecordChanged`` when known.
    public let ancestorRecord: Record?
    /// Seconds to wait before retrying, on retryable errors.
    public let retryAfterSeconds: Double?
    /// The lower-level error that caused this one, if any.
    public let underlyingError: (any Error)?

    /// Creates an error.
    public init(
        _ code: Code,
        message: String = "",
        partialErrorsByItemID: [AnyHashable: any Error]? = nil,
        serverRecord: Record? = nil,
        clientRecord: Record? = nil,
        ancestorRecord: Record? = nil,
        retryAfterSeconds: Double? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.partialErrorsByItemID = partialErrorsByItemID
        self.serverRecord = serverRecord
        self.clientRecord = clientRecord
        self.ancestorRecord = ancestorRecord
        self.retryAfterSeconds = retryAfterSeconds
        self.underlyingError = underlyingError
    }

    /// CloudKit's error domain string, `"CKErrorDomain"`.
    public static let errorDomain = "CKErrorDomain"

    /// `"<name> (<raw code>): <message>"`.
    public var description: String {
        var text = "\(code) (\(code.rawValue))"
        if !message.isEmpty { text += ": \(message)" }
        if let partial = partialErrorsByItemID, !partial.isEmpty {
            text += " [\(partial.count) item error\(partial.count == 1 ? "" : "s")]"
        }
        return text
    }

    /// The same text as ``description``.
    public var errorDescription: String? { description }
}

extension FogError.Code {
    /// Lets `catch FogError.unknownItem` match thrown errors (an expression pattern; `FogError.Code.unknownItem` would be an enum case pattern, which cannot match `any Error`).
    public static func ~= (lhs: FogError.Code, rhs: any Error) -> Bool {
        (rhs as? FogError)?.code == lhs
    }
}

extension FogError {
    /// The kinds of failure, with CloudKit's raw values (`CKError.Code`).
    public enum Code: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// A non-recoverable internal error.
        case internalError = 1
        /// Some items of a batch failed; see ``FogError/partialErrorsByItemID``.
        case partialFailure = 2
        /// The network is not available.
        case networkUnavailable = 3
        /// The network is up but the service is unreachable.
        case networkFailure = 4
        /// The container is unknown or not authorised.
        case badContainer = 5
        /// The service is unavailable; retry after ``FogError/retryAfterSeconds``.
        case serviceUnavailable = 6
        /// Requests are throttled; retry after ``FogError/retryAfterSeconds``.
        case requestRateLimited = 7
        /// An entitlement is missing.
        case missingEntitlement = 8
        /// There is no user: the container was opened on behalf of nobody.
        case notAuthenticated = 9
        /// The user may not read or write this data.
        case permissionFailure = 10
        /// The record or other item does not exist.
        case unknownItem = 11
        /// The request is malformed: a bad name, type, value or predicate.
        case invalidArguments = 12
        /// Results were truncated (deprecated in CloudKit).
        case resultsTruncated = 13
        /// The stored record changed since the caller fetched it.
        case serverRecordChanged = 14
        /// The store refused the request.
        case serverRejectedRequest = 15
        /// An asset's file is missing.
        case assetFileNotFound = 16
        /// An asset's file changed while it was being stored.
        case assetFileModified = 17
        /// The app's version is too old for the container.
        case incompatibleVersion = 18
        /// A uniqueness constraint was violated.
        case constraintViolation = 19
        /// The operation was cancelled.
        case operationCancelled = 20
        /// The change token is too old, or belongs to another incarnation of the store.
        case changeTokenExpired = 21
        /// Another item of the same atomic zone batch failed, so this one was not applied.
        case batchRequestFailed = 22
        /// The zone is busy; retry after ``FogError/retryAfterSeconds``.
        case zoneBusy = 23
        /// The operation is not valid for this database.
        case badDatabase = 24
        /// The storage quota is exceeded.
        case quotaExceeded = 25
        /// The zone does not exist.
        case zoneNotFound = 26
        /// The request is too large: too many items, or too many bytes.
        case limitExceeded = 27
        /// The user deleted the zone.
        case userDeletedZone = 28
        /// The share has too many participants.
        case tooManyParticipants = 29
        /// The record or zone is already shared.
        case alreadyShared = 30
        /// A parent or share reference points at a record that does not exist.
        case referenceViolation = 31
        /// A managed account restriction applies.
        case managedAccountRestricted = 32
        /// The user may need to verify to participate in the share.
        case participantMayNeedVerification = 33
        /// The response was lost; the request may or may not have been applied.
        case serverResponseLost = 34
        /// The asset is not available.
        case assetNotAvailable = 35
        /// The account is temporarily unavailable.
        case accountTemporarilyUnavailable = 36
        /// The participant was already invited.
        case participantAlreadyInvited = 37

        /// The case name, such as `unknownItem`.
        public var description: String {
            switch self {
            case .internalError: "internalError"
            case .partialFailure: "partialFailure"
            case .networkUnavailable: "networkUnavailable"
            case .networkFailure: "networkFailure"
            case .badContainer: "badContainer"
            case .serviceUnavailable: "serviceUnavailable"
            case .requestRateLimited: "requestRateLimited"
            case .missingEntitlement: "missingEntitlement"
            case .notAuthenticated: "notAuthenticated"
            case .permissionFailure: "permissionFailure"
            case .unknownItem: "unknownItem"
            case .invalidArguments: "invalidArguments"
            case .resultsTruncated: "resultsTruncated"
            case .serverRecordChanged: "serverRecordChanged"
            case .serverRejectedRequest: "serverRejectedRequest"
            case .assetFileNotFound: "assetFileNotFound"
            case .assetFileModified: "assetFileModified"
            case .incompatibleVersion: "incompatibleVersion"
            case .constraintViolation: "constraintViolation"
            case .operationCancelled: "operationCancelled"
            case .changeTokenExpired: "changeTokenExpired"
            case .batchRequestFailed: "batchRequestFailed"
            case .zoneBusy: "zoneBusy"
            case .badDatabase: "badDatabase"
            case .quotaExceeded: "quotaExceeded"
            case .zoneNotFound: "zoneNotFound"
            case .limitExceeded: "limitExceeded"
            case .userDeletedZone: "userDeletedZone"
            case .tooManyParticipants: "tooManyParticipants"
            case .alreadyShared: "alreadyShared"
            case .referenceViolation: "referenceViolation"
            case .managedAccountRestricted: "managedAccountRestricted"
            case .participantMayNeedVerification: "participantMayNeedVerification"
            case .serverResponseLost: "serverResponseLost"
            case .assetNotAvailable: "assetNotAvailable"
            case .accountTemporarilyUnavailable: "accountTemporarilyUnavailable"
            case .participantAlreadyInvited: "participantAlreadyInvited"
            }
        }
    }
}

extension FogError: CustomNSError {
    /// The error's code as an integer, the same as `CKError.Code`'s raw value.
    public var errorCode: Int { code.rawValue }

    /// CloudKit's user info: the description, the partial errors under
    /// ``PartialErrorsByItemIDKey``, the records of a conflict under
    /// ``RecordChangedErrorServerRecordKey`` and its two siblings, the retry delay under
    /// ``ErrorRetryAfterKey`` and the underlying error under `NSUnderlyingErrorKey`.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let partialErrorsByItemID { info[PartialErrorsByItemIDKey] = partialErrorsByItemID }
        if let serverRecord { info[RecordChangedErrorServerRecordKey] = serverRecord }
        if let clientRecord { info[RecordChangedErrorClientRecordKey] = clientRecord }
        if let ancestorRecord { info[RecordChangedErrorAncestorRecordKey] = ancestorRecord }
        if let retryAfterSeconds { info[ErrorRetryAfterKey] = retryAfterSeconds }
        if let underlyingError { info[NSUnderlyingErrorKey] = underlyingError }
        if !message.isEmpty { info[ServerErrorDescriptionKey] = message }
        return info
    }
}
