import FogKit
import Foundation
import Synchronization
import Testing

/// A "device" of the sync engine tests: a small notes app with its own in-memory store,
/// which it persists together with the engine's state at every `stateUpdate` (as Apple's
/// sample does), and a ``SyncEngine`` over one database.
///
/// Conflicts are resolved by the `modified` field (a process-wide clock): the later edit
/// wins, as in Apple's sample.
final class NotesDevice: SyncEngineDelegate, Sendable {
    /// One note of the local store.
    struct Note: Sendable {
        var title: String
        var modified: Int
        /// The record as the server last had it (its system fields), or `nil`.
        var lastKnown: Record?
    }

    /// What the device persists: its notes and the engine's state, written together.
    struct Persisted: Sendable {
        var notes: [Record.ID: Note] = [:]
        var state: Data?
    }

    struct Model: Sendable {
        var notes: [Record.ID: Note] = [:]
        var persisted = Persisted()
        /// Every event's description, in order.
        var events: [String] = []
        var accountChanges: [SyncEngine.Event.AccountChange.ChangeType] = []
        /// How many times each record arrived in a fetch.
        var fetched: [Record.ID: Int] = [:]
        var failedSaves: [Record.ID: FogError.Code] = [:]
        var zoneFetchErrors: [FogError.Code] = []
        /// After the state update that follows this many `fetchedRecordZoneChanges` events,
        /// the device "crashes": it stops handling events (and persisting).
        var crashAfterFetchedPages: Int?
        var fetchedPages = 0
        var crashed = false
        /// The scope ``nextFetchChangesOptions(_:syncEngine:)`` narrows fetches to, if any.
        var fetchScope: SyncEngine.FetchChangesOptions.Scope?
        /// How many times the engine asked for fetch options.
        var optionRequests = 0
        /// How many batches the device built for its engine.
        var batchesBuilt = 0
        /// Whether the device's batches are atomic by zone.
        var atomic = false
        /// Deletion reasons of fetched zone deletions.
        var zoneDeletions: [Database.DatabaseChange.Deletion.Reason] = []
    }

    /// A clock for the `modified` field, shared by every device of the process.
    static let clock = Atomic(0)

    let name: String
    let database: Database
    let zoneID: RecordZone.ID
    let model: Mutex<Model>
    private let engineBox = Mutex<SyncEngine?>(nil)

    init(_ name: String, database: Database, zoneID: RecordZone.ID = RecordZone.ID(zoneName: "Notes"), persisted: Persisted = Persisted()) {
        self.name = name
        self.database = database
        self.zoneID = zoneID
        var model = Model()
        model.notes = persisted.notes
        model.persisted = persisted
        self.model = Mutex(model)
    }

    /// A device that starts from what `other` persisted last, as the app does after a crash
    /// or a restart.
    static func restarted(from other: NotesDevice) -> NotesDevice {
        NotesDevice(other.name, database: other.database, zoneID: other.zoneID, persisted: other.model.withLock { $0.persisted })
    }

    /// Starts the engine from the persisted state.
    @discardableResult
    func start(automaticallySync: Bool = false, subscriptionID: Subscription.ID? = nil) throws -> SyncEngine {
        let saved = model.withLock { $0.persisted.state }
        let serialization = try saved.map { try JSONDecoder().decode(SyncEngine.State.Serialization.self, from: $0) }
        var configuration = SyncEngine.Configuration(database: database, stateSerialization: serialization, delegate: self)
        configuration.automaticallySync = automaticallySync
        configuration.subscriptionID = subscriptionID
        let engine = SyncEngine(configuration)
        engineBox.withLock { $0 = engine }
        return engine
    }

    /// Stops the engine (the app quits).
    func stop() { engineBox.withLock { $0 = nil } }

    var engine: SyncEngine { engineBox.withLock { $0! } }

    // MARK: - The app's edits

    func createZone() {
        engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: zoneID))])
    }

    func id(_ name: String) -> Record.ID { Record.ID(recordName: name, zoneID: zoneID) }

    /// Creates or edits a note, and tells the engine.
    func write(_ name: String, _ title: String) {
        let id = id(name)
        let modified = Self.clock.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        model.withLock { m in
            var note = m.notes[id] ?? Note(title: title, modified: modified, lastKnown: nil)
            note.title = title
            note.modified = modified
            m.notes[id] = note
        }
        engine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
    }

    /// Deletes a note, and tells the engine.
    func delete(_ name: String) {
        let id = id(name)
        _ = model.withLock { $0.notes.removeValue(forKey: id) }
        engine.state.add(pendingRecordZoneChanges: [.deleteRecord(id)])
    }

    /// The titles of the local notes, by record name.
    var titles: [String: String] {
        model.withLock { m in
            var all: [String: String] = [:]
            for (id, note) in m.notes { all[id.recordName] = note.title }
            return all
        }
    }

    func note(_ name: String) -> Note? { model.withLock { $0.notes[id(name)] } }

    var events: [String] { model.withLock { $0.events } }

    // MARK: - SyncEngineDelegate

    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        model.withLock { m in
            guard !m.crashed else { return }
            m.events.append(event.description)
            switch event {
            case .stateUpdate(let update):
                m.persisted = Persisted(notes: m.notes, state: try? JSONEncoder().encode(update.stateSerialization))
                if let limit = m.crashAfterFetchedPages, m.fetchedPages >= limit { m.crashed = true }
            case .accountChange(let change):
                m.accountChanges.append(change.changeType)
                switch change.changeType {
                case .signIn: break
                case .signOut, .switchAccounts: m.notes.removeAll()
                }
            case .fetchedDatabaseChanges(let changes):
                for deletion in changes.deletions {
                    m.zoneDeletions.append(deletion.reason)
                    m.notes = m.notes.filter { $0.key.zoneID != deletion.zoneID }
                }
            case .fetchedRecordZoneChanges(let changes):
                for modification in changes.modifications { Self.apply(modification.record, to: &m) }
                for deletion in changes.deletions { m.notes[deletion.recordID] = nil }
                m.fetchedPages += 1
            case .didFetchRecordZoneChanges(let done):
                if let error = done.error { m.zoneFetchErrors.append(error.code) }
            case .sentRecordZoneChanges(let sent):
                for record in sent.savedRecords { m.notes[record.recordID]?.lastKnown = record }
                for failed in sent.failedRecordSaves { m.failedSaves[failed.record.recordID] = failed.error.code }
            default:
                break
            }
        }
        // Resolutions that add pending changes (outside the lock: the state reports them).
        switch event {
        case .accountChange(let change):
            if case .signIn = change.changeType {
                let ids = model.withLock { Array($0.notes.keys) }
                if !ids.isEmpty {
                    syncEngine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: zoneID))])
                    syncEngine.state.add(pendingRecordZoneChanges: ids.map { .saveRecord($0) })
                }
            }
        case .sentRecordZoneChanges(let sent):
            var again: [SyncEngine.PendingRecordZoneChange] = []
            var zones: [SyncEngine.PendingDatabaseChange] = []
            model.withLock { m in
                for failed in sent.failedRecordSaves {
                    let id = failed.record.recordID
                    switch failed.error.code {
                    case .serverRecordChanged:
                        guard let server = failed.error.serverRecord, var local = m.notes[id] else { continue }
                        let serverModified = server["modified"] as? Int ?? 0
                        local.lastKnown = server
                        if local.modified > serverModified {
                            again.append(.saveRecord(id))
                        } else {
                            local.title = server["title"] as? String ?? ""
                            local.modified = serverModified
                        }
                        m.notes[id] = local
                    case .zoneNotFound:
                        zones.append(.saveZone(RecordZone(zoneID: id.zoneID)))
                        m.notes[id]?.lastKnown = nil
                        again.append(.saveRecord(id))
                    case .unknownItem:
                        m.notes[id]?.lastKnown = nil
                        again.append(.saveRecord(id))
                    case .batchRequestFailed:
                        // Innocent: another change of its atomic zone failed.
                        again.append(.saveRecord(id))
                    default:
                        break
                    }
                }
            }
            syncEngine.state.add(pendingDatabaseChanges: zones)
            syncEngine.state.add(pendingRecordZoneChanges: again)
        default:
            break
        }
    }

    /// Applies a fetched record: the later edit wins; the system fields are kept either way.
    private static func apply(_ record: Record, to m: inout Model) {
        let id = record.recordID
        m.fetched[id, default: 0] += 1
        let serverModified = record["modified"] as? Int ?? 0
        if var local = m.notes[id], local.modified > serverModified {
            local.lastKnown = record
            m.notes[id] = local
        } else {
            m.notes[id] = Note(title: record["title"] as? String ?? "", modified: serverModified, lastKnown: record)
        }
    }

    func nextFetchChangesOptions(
        _ context: SyncEngine.FetchChangesContext, syncEngine: SyncEngine
    ) async -> SyncEngine.FetchChangesOptions {
        model.withLock { m in
            m.optionRequests += 1
            var options = context.options
            if let scope = m.fetchScope { options.scope = scope }
            return options
        }
    }

    func nextRecordZoneChangeBatch(
        _ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine
    ) async -> SyncEngine.RecordZoneChangeBatch? {
        let pending = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
        let atomic = model.withLock { $0.atomic }
        var batch = await SyncEngine.RecordZoneChangeBatch(pendingChanges: pending) { [self] id in
            guard let note = model.withLock({ $0.notes[id] }) else {
                // The note is gone: drop the stale change so that the send does not loop.
                syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(id)])
                return nil
            }
            let record = note.lastKnown?.copy() ?? Record(recordType: "Note", recordID: id)
            record["title"] = note.title
            record["modified"] = note.modified
            return record
        }
        batch?.atomicByZone = atomic
        if batch != nil { model.withLock { $0.batchesBuilt += 1 } }
        return batch
    }
}
