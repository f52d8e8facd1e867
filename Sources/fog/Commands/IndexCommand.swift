import ArgumentParser
import FogKit
import Foundation

/// `fog index`: declares or lists the indexes of a record type.
struct IndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Declare or list the indexes of a record type's fields.",
        discussion: """
            Examples:
              fog index Post score queryable,sortable
              fog index Post title searchable
              fog index Post score none          # remove
              fog index Post                     # list, each index ready or building
            """)

    @OptionGroup var store: StoreOptions

    @OptionGroup var environment: EnvironmentOptions

    @Argument(help: "The record type.")
    var recordType: String

    @Argument(help: "The field (a user field, recordID, creationDate, modificationDate, …).")
    var field: String?

    @Argument(help: "The options: queryable, sortable, searchable, comma-separated; or none.")
    var options: String?

    func run() async throws {
        let admin = try store.openAdministrator(configuration: environment.applied())
        defer { admin.close() }
        if let field {
            guard let options else { throw ValidationError("give the options: queryable, sortable, searchable or none") }
            var set: IndexOptions = []
            for word in options.lowercased().split(separator: ",") {
                switch word.trimmingCharacters(in: .whitespaces) {
                case "queryable": set.insert(.queryable)
                case "sortable": set.insert(.sortable)
                case "searchable": set.insert(.searchable)
                case "none": break
                default: throw ValidationError("unknown index option \(word): use queryable, sortable, searchable or none")
                }
            }
            try await admin.setIndexes(set, forField: field, ofRecordType: recordType)
        }
        let indexes = try admin.indexes(ofRecordType: recordType)
        let states = try admin.indexStates(ofRecordType: recordType)
        if indexes.isEmpty { print("\(recordType): no indexes") }
        for (name, options) in indexes.sorted(by: { $0.key < $1.key }) {
            print("\(recordType).\(name)  \(options)  \(states[name] ?? .ready)")
        }
    }
}
