/// The state of a container's iCloud-style account (CloudKit's `CKAccountStatus`).
///
/// Every value is reachable:
/// - ``available``: a user is signed in (``Container/signIn(as:)``, or the `user` a
///   container was opened for).
/// - ``noAccount``: nobody is signed in (``Container/signOut()``, or a container opened for
///   `nil`).
/// - ``restricted`` and ``temporarilyUnavailable``: the signed-in user's account, set with
///   ``Container/setAccountStatus(_:)``. The private and shared databases then fail with
///   ``FogError/Code/notAuthenticated`` (restricted) or
///   ``FogError/Code/accountTemporarilyUnavailable`` (temporarily unavailable), as do writes
///   to the public database; public reads still work.
/// - ``couldNotDetermine``: what `accountStatus(completionHandler:)` reports, with the error,
///   when the status cannot be read — with FogKit, when the container's ``FaultPlan`` fails
///   the ``FaultPlan/Request/accountStatus`` request.
public enum AccountStatus: Int, Sendable, Hashable, CustomStringConvertible {
    /// The status could not be determined (the request for it failed).
    case couldNotDetermine = 0
    /// A user is signed in and the account is usable.
    case available = 1
    /// The user's account is restricted (parental controls, device management): only the
    /// public database can be read.
    case restricted = 2
    /// Nobody is signed in.
    case noAccount = 3
    /// The account is signed in but temporarily unavailable (CloudKit: the user must verify
    /// their password); calls that need it fail with
    /// ``FogError/Code/accountTemporarilyUnavailable`` until it is ``available`` again.
    case temporarilyUnavailable = 4

    /// The case name, such as `available`.
    public var description: String {
        switch self {
        case .couldNotDetermine: "couldNotDetermine"
        case .available: "available"
        case .restricted: "restricted"
        case .noAccount: "noAccount"
        case .temporarilyUnavailable: "temporarilyUnavailable"
        }
    }
}
