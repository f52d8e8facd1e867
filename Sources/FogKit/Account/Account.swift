import Synchronization

/// The signed-in account of an open container, shared by the container and its three
/// databases: who is signed in, and whether the account is usable.
///
/// Every database call reads it once (one lock, no allocation) and acts for that account
/// to its end, so a call in flight when the account changes finishes as the old account;
/// the next call acts for the new one.
final class Account: Sendable {
    /// One account as a call sees it.
    struct State: Sendable, Hashable {
        /// The name the user signed in with, or `nil` for nobody.
        var identity: String?
        /// The user's record name (`_` and 32 hex digits), or `nil` for nobody.
        var recordName: String?
        /// `available`, `restricted` or `temporarilyUnavailable` with a user; `noAccount`
        /// without.
        var status: AccountStatus

        /// The record name of a usable account: `nil` for nobody, and for a restricted
        /// or temporarily unavailable account.
        var usableRecordName: String? { status == .available ? recordName : nil }

        /// What the access policy tells a restricted or temporarily unavailable account.
        var problem: AccountProblem? {
            switch status {
            case .restricted: .restricted
            case .temporarilyUnavailable: .temporarilyUnavailable
            default: nil
            }
        }
    }

    private let state: Mutex<State>
    /// How many times the account was replaced. It changes inside the lock, before
    /// ``replace(with:)`` returns, so a reader that sees the count of its last cached read
    /// knows the account is the one it read then (``Database/context`` caches on it).
    private let replacements = Atomic<UInt64>(0)

    init(_ state: State) { self.state = Mutex(state) }

    /// The account now.
    var current: State { state.withLock { $0 } }

    /// The account now, and the ``version`` it goes with, read together.
    var currentWithVersion: (state: State, version: UInt64) {
        state.withLock { ($0, replacements.load(ordering: .acquiring)) }
    }

    /// The number of replacements so far, read without the lock: equal to the version of an
    /// earlier ``currentWithVersion`` read, the account is still the one that read returned.
    var version: UInt64 { replacements.load(ordering: .acquiring) }

    /// Replaces the account; returns the one it replaced.
    func replace(with new: State) -> State {
        state.withLock { s in
            defer {
                s = new
                _ = replacements.wrappingAdd(1, ordering: .releasing)
            }
            return s
        }
    }
}

/// Why a signed-in account may not use what needs an account (the engine's view of
/// ``AccountStatus/restricted`` and ``AccountStatus/temporarilyUnavailable``).
enum AccountProblem: Sendable, Hashable {
    case restricted
    case temporarilyUnavailable

    /// The error a call that needs the account gets.
    func error(_ what: String) -> FogError {
        switch self {
        case .restricted:
            FogError(.notAuthenticated, message: "\(what) needs an account, and the signed-in account is restricted")
        case .temporarilyUnavailable:
            FogError(
                .accountTemporarilyUnavailable,
                message:
                    "\(what) needs an account, and the signed-in account is temporarily unavailable; retry when accountStatus() is available"
            )
        }
    }
}
