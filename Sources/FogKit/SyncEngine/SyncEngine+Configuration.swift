import Foundation

extension SyncEngine {
    /// How a ``SyncEngine`` is set up (CloudKit's `CKSyncEngine.Configuration`).
    public struct Configuration: Sendable {
        /// The database the engine keeps the app's store in step with: a private or shared
        /// database (or a public one opened with `ChangeFeeds.everyZone`, which FogKit allows
        /// and CloudKit does not). One engine per database in an app; several engines on one
        /// database stand for several devices in tests.
        public var database: Database
        /// The state the engine starts from: the latest ``State/Serialization`` of a
        /// ``Event/stateUpdate(_:)`` event, or `nil` on the very first run.
        public var stateSerialization: State.Serialization?
        /// The delegate; the engine holds it weakly.
        public var delegate: any SyncEngineDelegate
        /// Whether the engine syncs by itself (default `true`): it fetches when the
        /// database's notifications arrive, sends shortly after changes are added, and
        /// retries after transient errors. With `false` it does nothing until
        /// ``SyncEngine/fetchChanges(_:)`` or ``SyncEngine/sendChanges(_:)`` is called.
        public var automaticallySync: Bool = true
        /// The ID of the database subscription the engine uses for its notifications; `nil`
        /// (the default) uses an existing database subscription, or creates one.
        public var subscriptionID: Subscription.ID?

        /// A configuration for `database`, starting from `stateSerialization`.
        public init(database: Database, stateSerialization: State.Serialization?, delegate: any SyncEngineDelegate) {
            self.database = database
            self.stateSerialization = stateSerialization
            self.delegate = delegate
        }
    }
}
