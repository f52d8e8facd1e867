extension FogError {
    // The codes as static members, as on CloudKit's `CKError`, so that
    // `catch FogError.unknownItem { … }` reads like `catch CKError.unknownItem { … }`
    // (an expression pattern, matched by ``Code/~=(_:_:)``).

    /// ``Code/internalError`` (1).
    public static let internalError = Code.internalError
    /// ``Code/partialFailure`` (2).
    public static let partialFailure = Code.partialFailure
    /// ``Code/networkUnavailable`` (3).
    public static let networkUnavailable = Code.networkUnavailable
    /// ``Code/networkFailure`` (4).
    public static let networkFailure = Code.networkFailure
    /// ``Code/badContainer`` (5).
    public static let badContainer = Code.badContainer
    /// ``Code/serviceUnavailable`` (6).
    public static let serviceUnavailable = Code.serviceUnavailable
    /// ``Code/requestRateLimited`` (7).
    public static let requestRateLimited = Code.requestRateLimited
    /// ``Code/missingEntitlement`` (8).
    public static let missingEntitlement = Code.missingEntitlement
    /// ``Code/notAuthenticated`` (9).
    public static let notAuthenticated = Code.notAuthenticated
    /// ``Code/permissionFailure`` (10).
    public static let permissionFailure = Code.permissionFailure
    /// ``Code/unknownItem`` (11).
    public static let unknownItem = Code.unknownItem
    /// ``Code/invalidArguments`` (12).
    public static let invalidArguments = Code.invalidArguments
    /// ``Code/resultsTruncated`` (13).
    public static let resultsTruncated = Code.resultsTruncated
    /// ``Code/serverRecordChanged`` (14).
    public static let serverRecordChanged = Code.serverRecordChanged
    /// ``Code/serverRejectedRequest`` (15).
    public static let serverRejectedRequest = Code.serverRejectedRequest
    /// ``Code/assetFileNotFound`` (16).
    public static let assetFileNotFound = Code.assetFileNotFound
    /// ``Code/assetFileModified`` (17).
    public static let assetFileModified = Code.assetFileModified
    /// ``Code/incompatibleVersion`` (18).
    public static let incompatibleVersion = Code.incompatibleVersion
    /// ``Code/constraintViolation`` (19).
    public static let constraintViolation = Code.constraintViolation
    /// ``Code/operationCancelled`` (20).
    public static let operationCancelled = Code.operationCancelled
    /// ``Code/changeTokenExpired`` (21).
    public static let changeTokenExpired = Code.changeTokenExpired
    /// ``Code/batchRequestFailed`` (22).
    public static let batchRequestFailed = Code.batchRequestFailed
    /// ``Code/zoneBusy`` (23).
    public static let zoneBusy = Code.zoneBusy
    /// ``Code/badDatabase`` (24).
    public static let badDatabase = Code.badDatabase
    /// ``Code/quotaExceeded`` (25).
    public static let quotaExceeded = Code.quotaExceeded
    /// ``Code/zoneNotFound`` (26).
    public static let zoneNotFound = Code.zoneNotFound
    /// ``Code/limitExceeded`` (27).
    public static let limitExceeded = Code.limitExceeded
    /// ``Code/userDeletedZone`` (28).
    public static let userDeletedZone = Code.userDeletedZone
    /// ``Code/tooManyParticipants`` (29).
    public static let tooManyParticipants = Code.tooManyParticipants
    /// ``Code/alreadyShared`` (30).
    public static let alreadyShared = Code.alreadyShared
    /// ``Code/referenceViolation`` (31).
    public static let referenceViolation = Code.referenceViolation
    /// ``Code/managedAccountRestricted`` (32).
    public static let managedAccountRestricted = Code.managedAccountRestricted
    /// ``Code/participantMayNeedVerification`` (33).
    public static let participantMayNeedVerification = Code.participantMayNeedVerification
    /// ``Code/serverResponseLost`` (34).
    public static let serverResponseLost = Code.serverResponseLost
    /// ``Code/assetNotAvailable`` (35).
    public static let assetNotAvailable = Code.assetNotAvailable
    /// ``Code/accountTemporarilyUnavailable`` (36).
    public static let accountTemporarilyUnavailable = Code.accountTemporarilyUnavailable
    /// ``Code/participantAlreadyInvited`` (37).
    public static let participantAlreadyInvited = Code.participantAlreadyInvited
}
