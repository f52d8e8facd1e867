import ArgumentParser
import FogKit
import Foundation

/// `fog import`: reads JSON Lines of record dictionaries (what `fog export` writes) into a store.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Read JSON Lines of CloudKit record dictionaries (fog export's output) into a store.",
        discussion: """
            Examples:
              fog export --store old | fog import - --store new
              fog import notes-export --store new            # a folder: records.jsonl and assets/
              fog import notes.jsonl --store new --user bob --zone Imported
            Each line goes to the database, user and zone it names ("database", "user", \
            zoneID.zoneName); --database, --user and --zone override them. Missing custom zones \
            are created, and a missing store too (with --container's identifier). Records are \
            saved in batches (--batch-size) with several batches committing at once \
            (--in-flight); a record that exists is overwritten. A bad line stops the import \
            with its line number; the batches committed before it are reported and stay, and \
            the batch it would have joined is not written. Progress shows on a terminal only.
            """)

    @Argument(help: "A file of JSON Lines, a folder fog export --output wrote, or - for standard input.")
    var input: String

    @OptionGroup var store: StoreOptions

    @OptionGroup var environment: EnvironmentOptions

    @Option(name: .long, help: "The container identifier, when the store does not exist yet.")
    var container = "iCloud.fog.import"

    @Option(name: .long, help: "Put every record in this database (private or public).")
    var database: String?

    @Option(name: .long, help: "Put every record in this user's private database.")
    var user: String?

    @Option(name: .long, help: "Put every record in this zone.")
    var zone: String?

    @Option(name: .long, help: "Records per batch (one atomic modifyRecords request).")
    var batchSize = 400

    @Option(name: .long, help: "Batches committing at once.")
    var inFlight = 16

    @Option(name: .long, help: "durable, relaxed or none.")
    var durability = "durable"

    func validate() throws {
        if let database, Database.Scope(exportName: database) == nil { throw ValidationError("--database must be private or public") }
        guard Container.Durability(rawValue: durability) != nil else {
            throw ValidationError("durability must be durable, relaxed or none")
        }
        guard batchSize > 0, inFlight > 0 else { throw ValidationError("--batch-size and --in-flight must be positive") }
    }

    func run() async throws {
        let (handle, assetBase, total) = try openInput()
        let configuration = environment.applied(
            to: Container.Configuration(durability: Container.Durability(rawValue: durability)!, limits: .bulkLoad))
        let location = try store.prepare()
        let identifier = try Container.storedIdentifier(in: location) ?? container
        let admin = try Container.Administrator(identifier: identifier, store: location, configuration: configuration)
        defer { admin.close() }
        var importer = Importer(admin: admin, configuration: configuration, batchSize: batchSize, inFlight: inFlight)
        defer { importer.close() }

        // Lines are decoded ahead, a chunk per task, while earlier records commit; the
        // decoded chunks are then taken in order, so the first bad line stops the import
        // with every record before it handed to the importer and none after it.
        let reader = LineReader(handle: handle)
        let options = TargetOptions(database: database, user: user, zone: zone, assetBase: assetBase)
        var progress = Progress()
        var lineNumber = 0
        var failure: String?
        var decoding: [Task<DecodedChunk, Never>] = []
        var chunk: [(Int, Data)] = []
        let chunkSize = 256

        /// Hands a decoded chunk to the importer; returns false when the import must stop.
        func consume(_ decoded: DecodedChunk) async -> Bool {
            do {
                for (line, item) in decoded.items {
                    switch item {
                    case .record(let record): try await importer.add(record, line: line)
                    case .user(let user): try await importer.addUser(user, line: line)
                    }
                }
            } catch let error as BatchFailure {
                failure = error.message
                return false
            } catch {
                failure = "\(error)"
                return false
            }
            if let bad = decoded.failure {
                failure = "line \(bad.line): \(bad.message)"
                return false
            }
            progress.show(importer.committed, fraction: total.map { Double(reader.bytesRead) / Double(max($0, 1)) })
            return true
        }

        reading: while let line = try reader.next() {
            lineNumber += 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            chunk.append((lineNumber, line))
            guard chunk.count >= chunkSize else { continue }
            let lines = chunk
            chunk = []
            decoding.append(Task { options.decode(lines) })
            if decoding.count > 7, await !consume(decoding.removeFirst().value) { break reading }
        }
        if failure == nil, !chunk.isEmpty {
            let lines = chunk
            decoding.append(Task { options.decode(lines) })
        }
        while failure == nil, !decoding.isEmpty {
            if await !consume(decoding.removeFirst().value) { break }
        }
        for task in decoding { task.cancel() }
        if failure == nil {
            do { try await importer.flush() } catch let error as BatchFailure { failure = error.message }
        }
        var batchFailure = await importer.drain()
        if failure == nil, batchFailure == nil {
            // Shares last: their roots and participants are in the store by now.
            do { try await importer.saveShares() } catch let error as BatchFailure { batchFailure = error }
        }
        progress.show(importer.committed, fraction: nil, force: true)
        progress.finish()
        let seconds = Date().timeIntervalSince(progress.started)
        if let message = failure ?? batchFailure?.message {
            FileHandle.standardError.write(
                Data(
                    """
                    fog import: \(message)
                    fog import: stopped; \(importer.committed) records were committed and stay, the records after them were not written\(importer.skipped > 0 ? ", \(importer.skipped) Users records skipped" : "")

                    """.utf8))
            throw ExitCode.failure
        }
        let rate = Double(importer.committed) / max(seconds, 0.000_001)
        FileHandle.standardError.write(
            Data(
                ("imported \(importer.committed) records in \(String(format: "%.2f", seconds)) s (\(Int(rate)) records/s)"
                    + (importer.skipped > 0 ? ", \(importer.skipped) Users records skipped" : "") + "\n").utf8))
    }

    /// The input's handle, the folder relative asset URLs are in, and its size when known.
    private func openInput() throws -> (FileHandle, URL?, Int64?) {
        if input == "-" {
            // Relative asset URLs of standard input are in the current folder.
            return (FileHandle.standardInput, URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true), nil)
        }
        var url = URL(fileURLWithPath: input)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ValidationError("\(input) does not exist")
        }
        if isDirectory.boolValue { url = url.appendingPathComponent("records.jsonl") }
        let handle = try FileHandle(forReadingFrom: url)
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
        return (handle, url.deletingLastPathComponent(), size)
    }
}

/// The lines of one chunk, decoded: each line's record with where it goes, and the first
/// bad line (the lines after it are not decoded).
struct DecodedChunk: Sendable {
    var items: [(Int, Importer.Line)] = []
    var failure: (line: Int, message: String)?
}

/// The command's choices of target, and how a line becomes a record.
struct TargetOptions: Sendable {
    var database: String?
    var user: String?
    var zone: String?
    var assetBase: URL?

    func decode(_ lines: [(Int, Data)]) -> DecodedChunk {
        let decoder = JSONDecoder()
        var result = DecodedChunk()
        result.items.reserveCapacity(lines.count)
        for (number, line) in lines {
            do {
                switch try decoder.decode(InterchangeLine.self, from: line) {
                case .record(let parsed): result.items.append((number, .record(try target(parsed))))
                case .user(let user):
                    guard !user.user.isEmpty else { throw LineError(message: "user: is empty") }
                    result.items.append((number, .user(user)))
                }
            } catch let error as LineError {
                result.failure = (number, error.message)
            } catch let error as DecodingError {
                if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                    result.failure = (number, "not a JSON object")
                } else {
                    result.failure = (number, WebServices.FormatError(error).description)
                }
            } catch {
                result.failure = (number, WebServices.FormatError(error).description)
            }
            if result.failure != nil { break }
        }
        return result
    }

    /// Where a line's record goes, and the record.
    func target(_ line: ExportLine) throws -> Importer.Item {
        let databaseName = database ?? line.database ?? "private"
        let scope = Database.Scope(exportName: databaseName)!
        var identity = user ?? line.user
        if scope == .private {
            guard let who = user ?? line.user else {
                throw LineError(message: "the record names no user for the private database; pass --user")
            }
            identity = who
        }
        let zoneName = zone ?? line.record.zoneID?.zoneName ?? RecordZone.ID.defaultZoneName
        if scope == .public, zoneName != RecordZone.ID.defaultZoneName {
            throw LineError(message: "zone \(zoneName): the public database has only its default zone")
        }
        let record = try Record(line.record, zoneID: RecordZone.ID(zoneName: zoneName), assetBase: assetBase)
        if record.recordType == Record.SystemType.share || line.share != nil {
            guard record.recordType == Record.SystemType.share, let share = line.share else {
                throw LineError(message: "share: a share's line has the share's state, and only a cloudkit.share record has one")
            }
            guard scope == .private else { throw LineError(message: "share: shares live in their owner's private database") }
            try share.validate()
            if share.root == nil, record.recordID.recordName != Share.zoneWideShareRecordName {
                throw LineError(message: "share.root: a share without a root is a zone-wide share, named \(Share.zoneWideShareRecordName)")
            }
            return Importer.Item(scope: scope, user: identity, record: record, share: share)
        }
        return Importer.Item(scope: scope, user: identity, record: record)
    }
}

struct LineError: Error {
    let message: String
}

struct BatchFailure: Error {
    let message: String
    /// Records of the failing batch that were saved anyway (only in a default zone, which
    /// is not atomic).
    var saved = 0
}

/// Groups records into batches by target (database, user, zone) and commits them with
/// several batches in flight.
struct Importer {
    struct Item: Sendable {
        var scope: Database.Scope
        var user: String?
        var record: Record
        /// A share's state, for a `cloudkit.share` record.
        var share: ShareLine?
    }

    /// What one line gives the importer.
    enum Line: Sendable {
        case record(Item)
        case user(DirectoryLine)
    }

    private struct Batch {
        var key: String
        var database: Database
        var records: [Record] = []
        var firstLine = 0
        var lastLine = 0
        var hasParent = false
    }

    let admin: Container.Administrator
    let configuration: Container.Configuration
    let batchSize: Int
    let inFlight: Int
    private(set) var committed = 0
    private(set) var skipped = 0
    private var containers: [String: Container] = [:]
    private var zones: Set<String> = []
    private var current: Batch?
    private var running: [Task<Int, any Error>] = []
    /// The shares read, with their lines, saved after every other record.
    private var shares: [(item: Item, line: Int)] = []

    init(admin: Container.Administrator, configuration: Container.Configuration, batchSize: Int, inFlight: Int) {
        self.admin = admin
        self.configuration = configuration
        self.batchSize = batchSize
        self.inFlight = inFlight
    }

    mutating func add(_ item: Item, line: Int) async throws {
        if item.record.recordType == Record.SystemType.userRecord {
            skipped += 1
            return
        }
        if item.share != nil {
            shares.append((item, line))
            return
        }
        let zoneName = item.record.recordID.zoneID.zoneName
        let key = "\(item.scope)/\(item.user ?? "")/\(zoneName)"
        if let batch = current, batch.key != key || batch.records.count >= batchSize { try await flush() }
        if current == nil {
            let database = try database(item.scope, user: item.user)
            try await createZone(zoneName, key: key, in: database, scope: item.scope)
            current = Batch(key: key, database: database, firstLine: line)
        }
        current!.records.append(item.record)
        current!.lastLine = line
        if item.record.parent != nil { current!.hasParent = true }
    }

    /// Sends the batch being filled. A batch with a record that has a parent waits for every
    /// earlier batch first, so that the parent (earlier in the input) is committed.
    mutating func flush() async throws {
        guard let batch = current else { return }
        current = nil
        if batch.hasParent {
            while !running.isEmpty { try await awaitOldest() }
        }
        while running.count >= inFlight { try await awaitOldest() }
        let records = batch.records, database = batch.database
        let lines = batch.firstLine == batch.lastLine ? "line \(batch.firstLine)" : "lines \(batch.firstLine)–\(batch.lastLine)"
        running.append(
            Task {
                do {
                    let results = try await database.modifyRecords(saving: records, deleting: [], savePolicy: .allKeys, atomically: true)
                    var saved = 0
                    var firstError: (Record.ID, any Error)?
                    for (id, result) in results.saveResults {
                        switch result {
                        case .success: saved += 1
                        case .failure(let e): if firstError == nil { firstError = (id, e) }
                        }
                    }
                    if let (id, error) = firstError {
                        // Only outside atomic zones (the default zone): the others of the batch are saved.
                        throw BatchFailure(message: "\(lines): record \(id.recordName): \(error)", saved: saved)
                    }
                    return saved
                } catch let error as FogError where error.code == .partialFailure {
                    let first = error.partialErrorsByItemID?.first {
                        ($0.value as? FogError)?.code != .batchRequestFailed
                    }
                    let name = (first?.key as? Record.ID)?.recordName ?? "?"
                    throw BatchFailure(message: "\(lines): record \(name): \(first.map { "\($0.value)" } ?? "\(error)")")
                } catch let error as BatchFailure {
                    throw error
                } catch {
                    throw BatchFailure(message: "\(lines): \(error)")
                }
            })
    }

    private mutating func awaitOldest() async throws {
        let task = running.removeFirst()
        do {
            committed += try await task.value
        } catch let error as BatchFailure {
            committed += error.saved
            throw error
        }
    }

    /// Waits for every batch in flight; returns the first failure.
    mutating func drain() async -> BatchFailure? {
        var failure: BatchFailure?
        while !running.isEmpty {
            do { try await awaitOldest() } catch {
                let batchFailure = error as? BatchFailure ?? BatchFailure(message: "\(error)")
                committed += batchFailure.saved
                if failure == nil { failure = batchFailure }
            }
        }
        return failure
    }

    /// Creates a custom zone of a private database the first time a record of it comes.
    private mutating func createZone(_ zoneName: String, key: String, in database: Database, scope: Database.Scope) async throws {
        if scope == .private, zoneName != RecordZone.ID.defaultZoneName, zones.insert(key).inserted {
            _ = try await database.save(RecordZone(zoneName: zoneName))
        }
    }

    /// Adds the user of a directory line to the store, with its email address and name.
    mutating func addUser(_ line: DirectoryLine, line number: Int) async throws {
        do {
            try await admin.addUser(
                line.user, emailAddress: line.directoryEntry.emailAddress, nameComponents: line.directoryEntry.nameComponents?.components)
        } catch {
            throw BatchFailure(message: "line \(number): user \(line.user): \(error)")
        }
    }

    /// Saves the shares read, each with its root as the store needs, then lets each
    /// participant who had accepted accept again (the store makes participants a client adds
    /// pending). A share that exists already gets the file's participants and permission.
    mutating func saveShares() async throws {
        for (item, line) in shares {
            do {
                try await saveShare(item)
                committed += 1
            } catch let error as LineError {
                throw BatchFailure(message: "line \(line): \(error.message)")
            } catch {
                throw BatchFailure(message: "line \(line): share \(item.record.recordID.recordName): \(error)")
            }
        }
        shares = []
    }

    private mutating func saveShare(_ item: Item) async throws {
        guard let state = item.share, let owner = item.user else { return }
        let zoneID = item.record.recordID.zoneID
        let database = try database(.private, user: owner)
        try await createZone(zoneID.zoneName, key: "\(Database.Scope.private)/\(owner)/\(zoneID.zoneName)", in: database, scope: .private)
        let share: Share
        var saving: [Record] = []
        do {
            guard let existing = try await database.record(for: item.record.recordID) as? Share else {
                throw LineError(message: "record \(item.record.recordID.recordName) exists and is not a share")
            }
            share = existing
        } catch let error as FogError where error.code == .unknownItem {
            if let root = state.root {
                let rootRecord = try await database.record(for: Record.ID(recordName: root, zoneID: zoneID))
                share = Share(rootRecord: rootRecord, shareID: item.record.recordID)
                saving.append(rootRecord)
            } else {
                share = Share(recordZoneID: zoneID)
            }
        }
        for key in item.record.allKeys() { share[key] = item.record[key] }
        share.publicPermission = try ShareLine.permission(state.publicPermission, field: "share.publicPermission")
        let ownerContainer = try container(owner)
        for p in state.participants where p.role == "PRIVATE_USER" {
            let id = try await container(p.user).userRecordID()
            let participant = try await ownerContainer.shareParticipant(forUserRecordID: id)
            participant.permission = try ShareLine.permission(p.permission, field: "share.participants.permission")
            if let existing = share.participants.first(where: { $0 == participant }) {
                existing.permission = participant.permission
            } else {
                share.addParticipant(participant)
            }
        }
        saving.append(share)
        let result = try await database.modifyRecords(saving: saving, deleting: [])
        guard let url = (try result.saveResults[share.recordID]?.get() as? Share)?.url else { return }
        for p in state.participants where p.role != "OWNER" && p.acceptanceStatus == "ACCEPTED" {
            let participant = try container(p.user)
            let metadata = try await participant.shareMetadata(for: url)
            if metadata.participantStatus != .accepted { _ = try await participant.accept(metadata) }
        }
    }

    /// The container of `user`, opened once.
    private mutating func container(_ user: String) throws -> Container {
        if let container = containers[user] { return container }
        let container = try admin.container(user: user, configuration: configuration)
        containers[user] = container
        return container
    }

    private mutating func database(_ scope: Database.Scope, user: String?) throws -> Database {
        let key = user ?? ""
        if let container = containers[key] { return container.database(with: scope) }
        let container = try admin.container(user: user ?? Container.defaultUser, configuration: configuration)
        containers[key] = container
        return container.database(with: scope)
    }

    func close() {
        for container in containers.values { container.close() }
    }
}
