import ArgumentParser
import FogKit
import Foundation
import Synchronization

/// `fog demo`: a scripted session in the spirit of a notes app.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run a short notes-app session against a store in a local folder.",
        discussion: """
            Creates (or reopens) the store, then: creates a zone and notes, fetches them, \
            updates one, shows a stale update being refused, deletes one, and shows that \
            another user cannot see the notes. Then alice shares a note with bob, who accepts, \
            reads and edits it through his shared database but sees none of her other notes, \
            until alice removes him. Then the feature flags of a content app: the schema gains \
            an Admin role that alone writes AppFeatures records, which everyone reads; alice is \
            an Admin, bob is not. Then the photo app's subscriptions (seed 003): alice subscribes to \
            new posts and to the comments of one post she follows; bob posts and comments; \
            alice's listener receives exactly those (`fog watch --user alice` prints them). \
            Then two of alice's devices, each with its own local note store and a SyncEngine, \
            sync through her private database: a note made on one appears on the other, and \
            offline edits of one note on both end in a conflict that the later edit wins. \
            Ends with `fog info`'s description.
            """)

    @Option(name: .long, help: "The folder that holds the store.")
    var store: String = "fog-demo-store"

    func run() async throws {
        let directory = URL(fileURLWithPath: store, isDirectory: true)
        let identifier = "iCloud.com.example.notes"
        let admin = try Container.Administrator(identifier: identifier, directory: directory)
        defer { admin.close() }
        let container = try admin.container(user: "alice")
        defer { container.close() }
        let userID = try await container.userRecordID()
        print("Opened container \(identifier) in \(directory.path) as alice (user record \(userID.recordName))")
        let database = container.privateCloudDatabase

        let zone = try await database.save(RecordZone(zoneName: "Notes"))
        print("Zone \(zone.zoneID.zoneName) ready, capabilities \(zone.capabilities)")

        let titles = ["Groceries", "Ideas for the weekend", "Books to read"]
        let notes = titles.enumerated().map { index, title in
            let note = Record(recordType: "Note", recordID: Record.ID(zoneID: zone.zoneID))
            note["title"] = title
            note["body"] = "Written by the FogKit demo."
            note["tags"] = ["demo", index == 0 ? "errands" : "leisure"]
            note["createdAt"] = Date()
            note["pinned"] = index == 0
            return note
        }
        let (saveResults, _) = try await database.modifyRecords(saving: notes, deleting: [])
        for note in notes {
            let saved = try saveResults[note.recordID]!.get()
            print("Saved note \"\(saved["title"] as? String ?? "")\" (\(short(saved.recordID)), tag \(saved.recordChangeTag ?? "-"))")
        }

        let fetched = try await database.records(for: notes.map(\.recordID), desiredKeys: ["title"])
        print("Fetched \(fetched.count) notes with desired keys [title]:")
        for note in notes {
            let record = try fetched[note.recordID]!.get()
            print("  \(short(record.recordID)): \(record.allKeys()) = \(record["title"] as? String ?? "")")
        }

        let first = try await database.record(for: notes[0].recordID)
        let staleCopy = first.copy()
        first["title"] = "Groceries (milk, eggs)"
        let updated = try await database.save(first)
        print(
            "Updated \(short(updated.recordID)): title \"\(updated["title"] as? String ?? "")\", tag \(first.recordChangeTag ?? "-") -> \(updated.recordChangeTag ?? "-")"
        )

        staleCopy["title"] = "Groceries (bread)"
        do {
            try await database.save(staleCopy)
            print("Unexpected: the stale update was accepted")
        } catch let error as FogError where error.code == .serverRecordChanged {
            print(
                "Stale update refused: \(error.code) (\(error.code.rawValue)); the stored title is \"\(error.serverRecord?["title"] as? String ?? "")\""
            )
        }

        try await database.deleteRecord(withID: notes[2].recordID)
        do {
            _ = try await database.record(for: notes[2].recordID)
        } catch let error as FogError {
            print("Deleted \(short(notes[2].recordID)); fetching it now gives \(error.code) (\(error.code.rawValue))")
        }

        try await admin.setIndexes(
            ["tags": .queryable, "title": [.queryable, .sortable, .searchable]], ofRecordType: "Note")
        let leisure = Query(recordType: "Note", predicate: try QueryPredicate(format: "tags CONTAINS %@", "leisure"))
        leisure.sortDescriptors = [Query.SortDescriptor(key: "title", ascending: true)]
        let (matches, _) = try await database.records(matching: leisure, inZoneWith: zone.zoneID, desiredKeys: ["title"])
        print("Query \(leisure.predicate), sorted by title: \(matches.count) note\(matches.count == 1 ? "" : "s")")
        for (id, result) in matches {
            print("  \(short(id)): \((try? result.get())?["title"] as? String ?? "")")
        }
        let search = Query(recordType: "Note", predicate: try QueryPredicate(format: "self CONTAINS %@", "weekend"))
        let plan = try database.explain(search, inZoneWith: zone.zoneID)
        print("How `self CONTAINS \"weekend\"` runs: \(plan.access)")

        let changes = try await database.recordZoneChanges(inZoneWith: zone.zoneID, since: nil)
        print(
            "Change feed of \(zone.zoneID.zoneName) from the start: \(changes.modificationResultsByID.count) changed, \(changes.deletions.count) deleted (`fog changes --zone \(zone.zoneID.zoneName)` reads it)"
        )

        let bob = try Container(identifier: identifier, directory: directory, user: "bob")
        defer { bob.close() }
        do {
            _ = try await bob.privateCloudDatabase.record(for: notes[0].recordID)
        } catch let error as FogError {
            print("Bob looks for alice's note in his private database: \(error.code)")
        }

        try await shareDemo(admin: admin, alice: container, bob: bob, note: notes[0].recordID, other: notes[1].recordID)
        try await featureFlagDemo(admin: admin, alice: container, bob: bob)
        try await photoAppDemo(alice: container, bob: bob)
        try await syncDemo(alice: container)

        print("")
        print(InfoCommand.render(try admin.storeInfo()), terminator: "")
    }

    /// Two of alice's devices, each a local note store with its own ``SyncEngine`` on her
    /// private database: a note written on the phone reaches the laptop; both then edit it
    /// offline, the phone's send conflicts, and the later edit wins on both.
    private func syncDemo(alice: Container) async throws {
        print("")
        print("Two of alice's devices, each with its own local note store and a SyncEngine on her private database:")
        let run = UUID().uuidString.prefix(8).lowercased()
        let zoneID = RecordZone.ID(zoneName: "SyncedNotes")
        let phone = DemoNoteStore(name: "phone", database: alice.privateCloudDatabase, zoneID: zoneID)
        let laptop = DemoNoteStore(name: "laptop", database: alice.privateCloudDatabase, zoneID: zoneID)
        let name = "trip-\(run)"
        phone.write(name, "Pack for the trip")
        try await phone.engine.sendChanges()
        print("  phone writes \"Pack for the trip\" and sends it")
        try await laptop.engine.fetchChanges()
        print("  laptop fetches: \(describe(laptop, name))")
        laptop.write(name, "Pack for the trip: passport!")
        phone.write(name, "Pack for the trip: passport, charger")
        print("  both edit the note offline; the phone's edit is the later one")
        try await laptop.engine.sendChanges()
        print("  laptop sends first")
        do {
            try await phone.engine.sendChanges()
        } catch let error as FogError where error.code == .partialFailure {
            for line in phone.log.withLock({ $0 }) { print("  \(line.replacingOccurrences(of: name, with: "the note"))") }
        }
        try await phone.engine.sendChanges()
        try await laptop.engine.fetchChanges()
        print("  after the phone's resend and the laptop's fetch:")
        print("    phone:  \(describe(phone, name))")
        print("    laptop: \(describe(laptop, name))")
    }

    private func describe(_ store: DemoNoteStore, _ name: String) -> String {
        store.titles.first { $0.0 == name }.map { "\"\($0.1)\"" } ?? "(no note)"
    }

    /// Seed 003's photo app: alice subscribes (public database) to new posts and to the
    /// comments of one post she follows; bob posts and comments, on that post and another;
    /// alice's listener receives exactly the new post and the comments on the followed one.
    private func photoAppDemo(alice: Container, bob: Container) async throws {
        let run = UUID().uuidString.prefix(8)
        let followed = Record(recordType: "Post", recordID: Record.ID(recordName: "post-\(run)-followed"))
        followed["caption"] = "A photo alice follows"
        let other = Record(recordType: "Post", recordID: Record.ID(recordName: "post-\(run)-other"))
        other["caption"] = "Another photo"
        _ = try await bob.publicCloudDatabase.modifyRecords(saving: [followed, other], deleting: [])

        let listener = "photo-app"
        try await alice.resetNotificationListener(listener)
        let pub = alice.publicCloudDatabase
        try await pub.save(
            QuerySubscription(
                recordType: "Post", predicate: QueryPredicate(value: true), subscriptionID: "allPosts", options: .firesOnRecordCreation))
        let comments = QuerySubscription(
            recordType: "Comment",
            predicate: try QueryPredicate(format: "post == %@", Record.Reference(recordID: followed.recordID, action: .none)),
            subscriptionID: followed.recordID.recordName, options: .firesOnRecordCreation)
        comments.notificationInfo = Subscription.NotificationInfo(
            alertBody: "New comment", desiredKeys: ["text"], shouldSendContentAvailable: true)
        try await pub.save(comments)
        print("Alice subscribes to new posts and to the comments on \(followed.recordID.recordName)")

        let sunset = Record(recordType: "Post", recordID: Record.ID(recordName: "post-\(run)-sunset"))
        sunset["caption"] = "Sunset"
        try await bob.publicCloudDatabase.save(sunset)
        for (text, target) in [("Lovely", followed), ("Where is this?", other), ("Great light", followed)] {
            let comment = Record(recordType: "Comment", recordID: Record.ID(recordName: "comment-\(run)-\(UUID().uuidString.prefix(8))"))
            comment["text"] = text
            comment["post"] = Record.Reference(recordID: target.recordID, action: .deleteSelf)
            try await bob.publicCloudDatabase.save(comment)
        }
        print("Bob posts \(sunset.recordID.recordName) and comments three times (twice on the followed post)")

        let sequence = try alice.notifications(listener: listener)
        let received = Task { () throws -> [CloudNotification] in
            var all: [CloudNotification] = []
            for try await notification in sequence {
                all.append(notification)
                if all.count == 3 { break }
            }
            return all
        }
        let timer = Task {
            try await Task.sleep(for: .seconds(5))
            received.cancel()
        }
        let notifications = try await received.value
        timer.cancel()
        print("Alice's listener receives \(notifications.count) notifications:")
        for notification in notifications { print("  " + WatchCommand.render(notification)) }
        if let last = notifications.last?.notificationID {
            try await alice.acknowledgeNotifications(through: last, listener: listener)
        }
        // Unsubscribed, so a later run starts afresh.
        _ = try await pub.modifySubscriptions(saving: [], deleting: ["allPosts", followed.recordID.recordName])
    }

    /// Seed 002's feature flags: the schema gains an `Admin` role that alone creates and
    /// changes `AppFeatures` records, which everyone reads, signed in or not; alice is made an
    /// Admin, bob is not.
    private func featureFlagDemo(admin: Container.Administrator, alice: Container, bob: Container) async throws {
        var schema = try admin.schema(for: .development)
        schema.roles.insert("Admin")
        schema.recordTypes["AppFeatures"] = Schema.RecordType(
            fields: ["tipJar": Schema.Field(.int64)], grants: [.world: .read, "Admin": [.read, .create, .write]])
        try await admin.importSchema(schema)
        try await admin.addUser(try await alice.userRecordID(), toRole: "Admin")
        let flags = Record(recordType: "AppFeatures", recordID: Record.ID(recordName: "flags"))
        flags["tipJar"] = 1
        _ = try await alice.publicCloudDatabase.modifyRecords(saving: [flags], deleting: [], savePolicy: .allKeys)
        print("Alice, in the Admin role, sets the feature flag tipJar = 1 in the public database")
        let nobody = try admin.container(user: nil)
        defer { nobody.close() }
        let seen = try await nobody.publicCloudDatabase.record(for: flags.recordID)
        print("Anyone reads it, signed in or not: tipJar = \(seen["tipJar"] as? Int ?? 0)")
        do {
            let attempt = try await bob.publicCloudDatabase.record(for: flags.recordID)
            attempt["tipJar"] = 0
            _ = try await bob.publicCloudDatabase.save(attempt)
            print("Unexpected: bob changed the flag")
        } catch let error as FogError {
            print("Bob, not an Admin, tries to turn it off: \(error.code)")
        }
    }

    /// Alice shares `note` with bob (read-write); bob accepts, reads and edits it through his
    /// shared database, cannot see `other`; alice removes him, and the note is gone for him.
    private func shareDemo(
        admin: Container.Administrator, alice: Container, bob: Container, note: Record.ID, other: Record.ID
    )
        async throws
    {
        func name(_ given: String) -> PersonNameComponents {
            var name = PersonNameComponents()
            name.givenName = given
            return name
        }
        _ = try await admin.addUser("alice", emailAddress: "alice@example.com", nameComponents: name("Alice"))
        _ = try await admin.addUser("bob", emailAddress: "bob@example.com", nameComponents: name("Bob"))
        let database = alice.privateCloudDatabase
        let root = try await database.record(for: note)
        let share = Share(rootRecord: root)
        share[Share.SystemFieldKey.title] = root["title"] as? String
        let participant = try await alice.shareParticipant(forEmailAddress: "bob@example.com")
        participant.permission = .readWrite
        share.addParticipant(participant)
        let (results, _) = try await database.modifyRecords(saving: [root, share], deleting: [])
        guard let saved = try results[share.recordID]?.get() as? Share, let url = saved.url else { return }
        print("Alice shares \(short(note)) with bob@example.com (read-write): \(url)")

        let metadata = try await bob.shareMetadata(for: url)
        _ = try await bob.accept(metadata)
        let aliceName = try await alice.userRecordID().recordName
        let zoneID = RecordZone.ID(zoneName: note.zoneID.zoneName, ownerName: aliceName)
        let zones = try await bob.sharedCloudDatabase.allRecordZones().map(\.zoneID)
        print(
            "Bob accepts as \(metadata.participantRole), \(metadata.participantPermission); his shared database lists \(zones.contains(zoneID) ? "alice's zone \(zoneID.zoneName)" : "no zone")"
        )
        let shared = bob.sharedCloudDatabase
        let seen = try await shared.record(for: Record.ID(recordName: note.recordName, zoneID: zoneID))
        seen["title"] = "\(seen["title"] as? String ?? "") (and coffee)"
        _ = try await shared.save(seen)
        print("Bob edits it; alice reads \"\(try await database.record(for: note)["title"] as? String ?? "")\"")
        do {
            _ = try await shared.record(for: Record.ID(recordName: other.recordName, zoneID: zoneID))
        } catch let error as FogError {
            print("Bob looks for another of alice's notes through his shared database: \(error.code)")
        }
        if let current = try await database.record(for: share.recordID) as? Share, let bobs = current.participants.last {
            current.removeParticipant(bobs)
            _ = try await database.save(current)
        }
        do {
            _ = try await shared.record(for: Record.ID(recordName: note.recordName, zoneID: zoneID))
        } catch let error as FogError {
            print("Alice removes bob; the shared note is gone for him: \(error.code)")
        }
    }

    private func short(_ id: Record.ID) -> String { String(id.recordName.prefix(8)) }
}
