import Foundation
import Synchronization

extension SyncEngine {
    /// Compares the account the state belongs to with the signed-in one. On a change it
    /// resets the state (tokens, pending changes and zones to fetch of the previous account
    /// go) and reports it with one ``Event/accountChange(_:)`` for the net change, then a
    /// ``Event/stateUpdate(_:)``. Returns whether the engine may sync: a user is signed in
    /// and the account is available.
    ///
    /// A state that never saw an account (a first run) takes the signed-in user without an
    /// event. A restricted, temporarily unavailable or undetermined account changes nothing:
    /// the engine waits, keeping its state.
    ///
    /// Called with the work lock held.
    func reconcileAccount() async -> Bool {
        let current: String?
        switch try? await server.accountStatus() {
        case .available?:
            guard let id = try? await server.userRecordID() else { return false }
            current = id.recordName
        case .noAccount?:
            current = nil
        default:
            return false
        }
        let before = state.storage
        if before.knowsUser, before.userRecordName == current { return current != nil }
        if !before.knowsUser {
            state.update {
                $0.knowsUser = true
                $0.userRecordName = current
            }
            await postStateUpdate()
            return current != nil
        }
        let change: Event.AccountChange.ChangeType
        switch (before.userRecordName, current) {
        case (nil, let now?): change = .signIn(currentUser: Record.ID(recordName: now))
        case (let was?, nil): change = .signOut(previousUser: Record.ID(recordName: was))
        case (let was?, let now?):
            change = .switchAccounts(previousUser: Record.ID(recordName: was), currentUser: Record.ID(recordName: now))
        case (nil, nil): return false
        }
        state.update { $0 = $0.reset(for: current) }
        lostSaves.withLock { $0.removeAll() }
        await events.post(.accountChange(Event.AccountChange(changeType: change)))
        await postStateUpdate()
        return current != nil
    }
}
