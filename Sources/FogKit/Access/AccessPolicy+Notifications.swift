import Foundation

extension AccessPolicy {
    /// Whether a notification about a record may go to its subscriber (`request.caller`):
    /// only when the subscriber may fetch the record. In the public database the security
    /// roles decide (`grants`); in the shared database an accepted share must cover the record
    /// (`request.shareStanding`); a user's own private database is theirs. A notification
    /// never tells a subscriber about a record they could not read.
    func mayNotify(_ request: AccessRequest, grants: PublicGrants) -> Bool {
        do {
            try check(.fetch, request, grants: grants)
            return true
        } catch {
            return false
        }
    }
}
