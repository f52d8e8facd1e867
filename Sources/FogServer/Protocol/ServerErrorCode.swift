import HTTPTypes

/// The 14 `serverErrorCode` values CloudKit Web Services documents, each with its HTTP
/// status. FogServer sends no other code: clients decode them into closed enums.
public enum ServerErrorCode: String, Sendable, CaseIterable, Codable {
    /// The caller may not touch this endpoint, record, zone or database.
    case accessDenied = "ACCESS_DENIED"
    /// An operation of a failed atomic batch that did not fail itself.
    case atomicError = "ATOMIC_ERROR"
    /// Credentials were given but rejected: an unknown API token, a bad signature.
    case authenticationFailed = "AUTHENTICATION_FAILED"
    /// The request needs a signed-in user and none was given; carries `redirectURL`.
    case authenticationRequired = "AUTHENTICATION_REQUIRED"
    /// A malformed or invalid request.
    case badRequest = "BAD_REQUEST"
    /// The `recordChangeTag` is out of date.
    case conflict = "CONFLICT"
    /// A create of something that exists.
    case exists = "EXISTS"
    /// A fault of the server.
    case internalError = "INTERNAL_ERROR"
    /// No such record, resource or endpoint.
    case notFound = "NOT_FOUND"
    /// Over the user's or the app's storage quota.
    case quotaExceeded = "QUOTA_EXCEEDED"
    /// Too many requests; retry after `retryAfter` seconds.
    case throttled = "THROTTLED"
    /// A transient fault; retry later.
    case tryAgainLater = "TRY_AGAIN_LATER"
    /// A validating reference would break.
    case validatingReferenceError = "VALIDATING_REFERENCE_ERROR"
    /// The zone named in the request does not exist.
    case zoneNotFound = "ZONE_NOT_FOUND"

    /// The HTTP status of a whole request that fails with this code.
    public var status: HTTPResponse.Status {
        switch self {
        case .accessDenied: .forbidden
        case .atomicError, .badRequest: .badRequest
        case .authenticationFailed: .unauthorized
        case .authenticationRequired: .init(code: 421, reasonPhrase: "Misdirected Request")
        case .conflict, .exists: .conflict
        case .internalError: .internalServerError
        case .notFound, .zoneNotFound: .notFound
        case .quotaExceeded: .contentTooLarge
        case .throttled: .tooManyRequests
        case .tryAgainLater: .serviceUnavailable
        case .validatingReferenceError: .preconditionFailed
        }
    }
}
