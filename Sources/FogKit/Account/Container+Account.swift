import Foundation

extension Container {
    /// The identity (the name passed to ``init(identifier:directory:user:configuration:)``
    /// or ``signIn(as:)``) of the signed-in user, or `nil` when nobody is signed in.
    public var userIdentity: String? { account.current.identity }

    /// The signed-in account's status (CloudKit's `accountStatus()`): ``AccountStatus/available``,
    /// ``AccountStatus/noAccount``, ``AccountStatus/restricted`` or
    /// ``AccountStatus/temporarilyUnavailable``.
    ///
    /// - Throws: the error of the container's ``FaultPlan`` for the
    ///   ``FaultPlan/Request/accountStatus`` request (then
    ///   `accountStatus(completionHandler:)` reports ``AccountStatus/couldNotDetermine`` with
    ///   the error, as CloudKit does when it cannot reach its servers);
    ///   ``FogError/Code/internalError`` on a closed container.
    public func accountStatus() async throws -> AccountStatus {
        if closed.isSet { throw FogError(.internalError, message: "the container is closed") }
        let context = privateCloudDatabase.context
        _ = try context.injectFaults(.accountStatus, zones: [])
        return account.current.status
    }

    /// Signs `user` in, as signing in to iCloud on a device does (a FogKit addition: CloudKit
    /// apps cannot sign in). The next call of any of the container's databases acts for
    /// `user`; calls already running finish for the account they started with. The account
    /// is ``AccountStatus/available``. Posts ``Foundation/Notification/Name/AccountChanged``
    /// unless `user` was already signed in with an available account.
    ///
    /// Signing in as another user while one is signed in switches accounts.
    ///
    /// - Throws: ``FogError/Code/invalidArguments`` for an empty or too long name (1 to 255
    ///   bytes); ``FogError/Code/internalError`` on a closed container. Nothing changes then.
    public func signIn(as user: String) throws {
        if closed.isSet { throw FogError(.internalError, message: "the container is closed") }
        guard !user.isEmpty, user.utf8.count <= 255 else {
            throw FogError(.invalidArguments, message: "signIn(as:): the user identity must be 1 to 255 bytes long")
        }
        let recordName = try fogTry { try engine.users.userRecordName(for: user) }
        changeAccount(to: Account.State(identity: user, recordName: recordName, status: .available))
    }

    /// Signs the user out, as signing out of iCloud on a device does (a FogKit addition):
    /// the account becomes ``AccountStatus/noAccount`` and the container acts for nobody
    /// (only the public database can be read). Posts
    /// ``Foundation/Notification/Name/AccountChanged`` when someone was signed in.
    public func signOut() {
        changeAccount(to: Account.State(identity: nil, recordName: nil, status: .noAccount))
    }

    /// Sets the status of the signed-in account (a FogKit addition, to test how an app
    /// handles accounts it cannot use): ``AccountStatus/restricted`` (calls that need the
    /// account fail with ``FogError/Code/notAuthenticated``),
    /// ``AccountStatus/temporarilyUnavailable`` (they fail with
    /// ``FogError/Code/accountTemporarilyUnavailable``) or ``AccountStatus/available`` again.
    /// Public reads work whatever the status. Posts
    /// ``Foundation/Notification/Name/AccountChanged`` when the status changes. A later
    /// ``signIn(as:)`` starts with an available account.
    ///
    /// - Throws: ``FogError/Code/notAuthenticated`` when nobody is signed in;
    ///   ``FogError/Code/invalidArguments`` for ``AccountStatus/noAccount`` (use ``signOut()``)
    ///   and ``AccountStatus/couldNotDetermine`` (use a ``FaultPlan``). Nothing changes then.
    public func setAccountStatus(_ status: AccountStatus) throws {
        switch status {
        case .available, .restricted, .temporarilyUnavailable: break
        case .noAccount:
            throw FogError(
                .invalidArguments, message: "setAccountStatus(_:): sign the user out with signOut() instead of setting noAccount")
        case .couldNotDetermine:
            throw FogError(
                .invalidArguments,
                message:
                    "setAccountStatus(_:): couldNotDetermine is what a failed accountStatus request reports; inject one with a FaultPlan")
        }
        var state = account.current
        guard state.recordName != nil else {
            throw FogError(.notAuthenticated, message: "setAccountStatus(_:): nobody is signed in")
        }
        state.status = status
        changeAccount(to: state)
    }

    /// The account's statuses after each change of the signed-in account, from now on: an
    /// `AsyncStream` that yields once per ``Foundation/Notification/Name/AccountChanged``
    /// the container posts, and ends when the container is closed or the iterating task is
    /// cancelled. Each access makes a new stream (a FogKit addition; ``SyncEngine`` uses it).
    public var accountChanges: AsyncStream<AccountStatus> { accountWatchers.stream() }

    /// Replaces the account, and tells the watchers when it changed.
    private func changeAccount(to new: Account.State) {
        let old = account.replace(with: new)
        guard old != new else { return }
        NotificationCenter.default.post(name: .AccountChanged, object: self)
        accountWatchers.yield(new.status)
    }
}
