/// Whether the container has a user (CloudKit's `CKAccountStatus`).
public enum AccountStatus: Int, Sendable, Hashable {
    /// The status could not be determined.
    case couldNotDetermine = 0
    /// The container was opened on behalf of a user.
    case available = 1
    /// The user's access is restricted.
    case restricted = 2
    /// The container was opened on behalf of nobody.
    case noAccount = 3
    /// The account is temporarily unavailable.
    case temporarilyUnavailable = 4
}
