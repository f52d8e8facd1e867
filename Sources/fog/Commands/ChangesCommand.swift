import ArgumentParser
import FogKit
import Foundation

/// `fog changes`: reads a zone's (or a database's) change feed from a token.
struct ChangesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes",
        abstract: "Print the changes of a zone, or the zones that changed in a database, since a token.",
        discussion: """
            Examples:
              fog changes --user alice --zone Notes                # every change of the zone
              fog changes --user alice --zone Notes --since TOKEN  # the changes after TOKEN
              fog changes --user alice                             # zones changed in the private database
            The last line is the token to pass to --since next time.
            """)

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "The zone; without it, the database's zone feed.")
    var zone: String?

    @Option(name: .long, help: "The token a previous run printed (base64).")
    var since: String?

    @OptionGroup var target: DatabaseOptions

    @OptionGroup var environment: EnvironmentOptions

    @Option(name: .long, help: "The most changes per page (default 400).")
    var limit: Int = 0

    @Flag(name: .long, help: "Serve feeds for every zone, default zones and the public database included.")
    var everyZone = false

    func run() async throws {
        var token: ServerChangeToken?
        if let since {
            guard let data = Data(base64Encoded: since) else { throw ValidationError("--since is not a token (base64)") }
            token = ServerChangeToken(data: data)
        }
        let (admin, container, db) = try target.open(
            store, configuration: environment.applied(to: .init(changeFeeds: everyZone ? .everyZone : .cloudKit)))
        defer {
            container.close()
            admin.close()
        }
        if let zone {
            let zoneID = RecordZone.ID(zoneName: zone)
            while true {
                let page = try await db.recordZoneChanges(inZoneWith: zoneID, since: token, resultsLimit: limit)
                for (_, result) in page.modificationResultsByID.sorted(by: { $0.key.recordName < $1.key.recordName }) {
                    print("changed  " + QueryCommand.render(try result.get().record))
                }
                for deletion in page.deletions { print("deleted  \(deletion.recordID.recordName) (\(deletion.recordType))") }
                token = page.changeToken
                if !page.moreComing { break }
            }
        } else {
            while true {
                let page = try await db.databaseChanges(since: token, resultsLimit: limit)
                for m in page.modifications { print("changed  zone \(m.zoneID.zoneName)") }
                for d in page.deletions { print("\(d.reason == .purged ? "purged " : "deleted") zone \(d.zoneID.zoneName)") }
                token = page.changeToken
                if !page.moreComing { break }
            }
        }
        print("token    \(token!)")
    }
}
