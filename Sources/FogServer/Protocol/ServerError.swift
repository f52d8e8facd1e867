import FogKit
import Foundation

/// An error a request (or one item of it) answers with: CloudKit Web Services' error
/// dictionary, `{uuid, serverErrorCode, reason}` and, where they apply, `retryAfter` and
/// `redirectURL`.
struct ServerError: Error, Sendable {
    var code: ServerErrorCode
    var reason: String
    var retryAfter: Double? = nil
    var redirectURL: String? = nil

    init(_ code: ServerErrorCode, _ reason: String, retryAfter: Double? = nil, redirectURL: String? = nil) {
        self.code = code
        self.reason = reason
        self.retryAfter = retryAfter
        self.redirectURL = redirectURL
    }

    /// The error dictionary's members, after any that name the item (`recordName`, `zoneID`).
    func members(item: [(String, JSON)] = []) -> [(String, JSON)] {
        var members = item
        members.append(("uuid", .string(UUID().uuidString.lowercased())))
        members.append(("serverErrorCode", .string(code.rawValue)))
        members.append(("reason", .string(reason)))
        if let retryAfter { members.append(("retryAfter", .double(retryAfter))) }
        if let redirectURL { members.append(("redirectURL", .string(redirectURL))) }
        return members
    }

    /// The error dictionary of an item of a batch.
    func item(_ item: [(String, JSON)]) -> JSON { .object(members(item: item)) }
}

extension ServerError {
    /// The Web Services error for a FogKit error, or any other error a request met.
    ///
    /// FogKit's 37 codes fold into the 14 the protocol has (`Docs/Server.md`, "Errors").
    /// `notAuthenticated` becomes `AUTHENTICATION_REQUIRED` with the sign-in page in
    /// `redirectURL`.
    init(_ error: any Error, signIn: String?) {
        if let error = error as? ServerError {
            self = error
            return
        }
        if let error = error as? WebServices.FormatError {
            self.init(.badRequest, error.description)
            return
        }
        guard let error = error as? FogError else {
            self.init(.internalError, "\(error)")
            return
        }
        let reason = error.message
        switch error.code {
        case .notAuthenticated: self.init(.authenticationRequired, reason, redirectURL: signIn)
        case .permissionFailure, .managedAccountRestricted, .missingEntitlement, .userDeletedZone:
            self.init(.accessDenied, reason)
        case .serverRecordChanged: self.init(.conflict, reason)
        case .unknownItem, .badContainer, .assetFileNotFound, .assetNotAvailable: self.init(.notFound, reason)
        case .zoneNotFound: self.init(.zoneNotFound, reason)
        case .quotaExceeded: self.init(.quotaExceeded, reason)
        case .requestRateLimited: self.init(.throttled, reason, retryAfter: error.retryAfterSeconds ?? 1)
        case .serviceUnavailable, .zoneBusy, .networkFailure, .networkUnavailable, .serverResponseLost,
            .accountTemporarilyUnavailable:
            self.init(.tryAgainLater, reason, retryAfter: error.retryAfterSeconds ?? 1)
        case .referenceViolation: self.init(.validatingReferenceError, reason)
        case .batchRequestFailed: self.init(.atomicError, reason)
        case .constraintViolation, .alreadyShared: self.init(.exists, reason)
        case .internalError, .badDatabase, .incompatibleVersion: self.init(.internalError, reason)
        case .invalidArguments, .limitExceeded, .changeTokenExpired, .assetFileModified, .serverRejectedRequest,
            .partialFailure, .resultsTruncated, .operationCancelled, .tooManyParticipants,
            .participantMayNeedVerification, .participantAlreadyInvited:
            self.init(.badRequest, reason)
        @unknown default: self.init(.internalError, reason)
        }
    }
}
