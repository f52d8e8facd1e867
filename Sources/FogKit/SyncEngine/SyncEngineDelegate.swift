import Foundation

/// The app's side of a ``SyncEngine`` (CloudKit's `CKSyncEngineDelegate`): it handles the
/// engine's events and supplies the records to send.
///
/// The engine holds its delegate weakly. Events arrive one at a time: the next waits until
/// ``handleEvent(_:syncEngine:)`` returns. Never call ``SyncEngine/fetchChanges(_:)`` or
/// ``SyncEngine/sendChanges(_:)`` from inside a delegate method: they wait for the events
/// the delegate is handling.
public protocol SyncEngineDelegate: AnyObject, Sendable {
    /// Handles one event: apply fetched changes to the local store, persist state
    /// serializations, resolve failed saves, react to account changes.
    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async

    /// The next batch of record changes to send, or `nil` when there is nothing more. Called
    /// repeatedly during a send; return only changes inside `context.options.scope` (others
    /// fail with `invalidArguments`). ``SyncEngine/RecordZoneChangeBatch/init(pendingChanges:recordProvider:)``
    /// builds a batch within CloudKit's limits from the pending changes.
    func nextRecordZoneChangeBatch(
        _ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine
    ) async -> SyncEngine.RecordZoneChangeBatch?

    /// The options for the next request of a fetch, asked before every request so that the
    /// app can narrow or reorder the fetch as it runs. The default returns
    /// `context.options`, which changes nothing.
    func nextFetchChangesOptions(
        _ context: SyncEngine.FetchChangesContext, syncEngine: SyncEngine
    ) async -> SyncEngine.FetchChangesOptions
}

extension SyncEngineDelegate {
    /// Returns `context.options`: the fetch goes on as it started.
    public func nextFetchChangesOptions(
        _ context: SyncEngine.FetchChangesContext, syncEngine: SyncEngine
    ) async -> SyncEngine.FetchChangesOptions {
        context.options
    }
}
