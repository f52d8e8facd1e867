import FogKit
import Foundation
import Synchronization

/// A device's local note store in `fog demo`'s sync part: notes in memory, kept in step with a
/// database by a ``SyncEngine`` (explicit sync; a conflict goes to the later edit).
final class DemoNoteStore: SyncEngineDelegate, Sendable {
    struct Note: Sendable {
        var title: String
        var edited: Int
        /// The record as the server last had it, for its system fields.
        var lastKnown: Record?
    }

    let name: String
    let zoneID: RecordZone.ID
    private let notes = Mutex<[Record.ID: Note]>([:])
    /// What happened during sends, for the demo to print.
    let log = Mutex<[String]>([])
    private let engineBox = Mutex<SyncEngine?>(nil)
    /// The demo's clock for `edited`: a later edit has a larger value.
    static let clock = Atomic(0)

    init(name: String, database: Database, zoneID: RecordZone.ID) {
        self.name = name
        self.zoneID = zoneID
        var configuration = SyncEngine.Configuration(database: database, stateSerialization: nil, delegate: self)
        configuration.automaticallySync = false
        engineBox.withLock { $0 = SyncEngine(configuration) }
    }

    var engine: SyncEngine { engineBox.withLock { $0! } }

    /// Writes a note locally and tells the engine.
    func write(_ recordName: String, _ title: String) {
        let id = Record.ID(recordName: recordName, zoneID: zoneID)
        let edited = Self.clock.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        notes.withLock { $0[id, default: Note(title: title, edited: edited)].title = title }
        notes.withLock { $0[id]?.edited = edited }
        engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: zoneID))])
        engine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
    }

    /// The notes' titles, by record name, sorted.
    var titles: [(String, String)] {
        notes.withLock { $0.map { ($0.key.recordName, $0.value.title) } }.sorted { $0.0 < $1.0 }
    }

    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        switch event {
        case .fetchedRecordZoneChanges(let changes):
            notes.withLock { notes in
                for modification in changes.modifications {
                    let record = modification.record
                    let edited = record["edited"] as? Int ?? 0
                    if let local = notes[record.recordID], local.edited > edited {
                        notes[record.recordID]?.lastKnown = record
                    } else {
                        notes[record.recordID] = Note(title: record["title"] as? String ?? "", edited: edited, lastKnown: record)
                    }
                }
                for deletion in changes.deletions { notes[deletion.recordID] = nil }
            }
        case .sentRecordZoneChanges(let sent):
            var again: [SyncEngine.PendingRecordZoneChange] = []
            notes.withLock { notes in
                for record in sent.savedRecords { notes[record.recordID]?.lastKnown = record }
                for failure in sent.failedRecordSaves {
                    let id = failure.record.recordID
                    guard failure.error.code == .serverRecordChanged, let server = failure.error.serverRecord, var local = notes[id]
                    else {
                        log.withLock { $0.append("\(name): \(id.recordName) failed with \(failure.error.code)") }
                        continue
                    }
                    local.lastKnown = server
                    let serverEdited = server["edited"] as? Int ?? 0
                    if local.edited > serverEdited {
                        again.append(.saveRecord(id))
                        log.withLock {
                            $0.append(
                                "\(name): conflict on \(id.recordName) (serverRecordChanged); its own edit is later, so it merges it into the server record and sends again"
                            )
                        }
                    } else {
                        local.title = server["title"] as? String ?? ""
                        local.edited = serverEdited
                        log.withLock { $0.append("\(name): conflict on \(id.recordName); the server's edit is later, so it takes it") }
                    }
                    notes[id] = local
                }
            }
            syncEngine.state.add(pendingRecordZoneChanges: again)
        default:
            break
        }
    }

    func nextRecordZoneChangeBatch(
        _ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine
    ) async -> SyncEngine.RecordZoneChangeBatch? {
        let pending = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
        return await SyncEngine.RecordZoneChangeBatch(pendingChanges: pending) { [self] id in
            guard let note = notes.withLock({ $0[id] }) else { return nil }
            let record = note.lastKnown?.copy() ?? Record(recordType: "SyncedNote", recordID: id)
            record["title"] = note.title
            record["edited"] = note.edited
            return record
        }
    }
}
