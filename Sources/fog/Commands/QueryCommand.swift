import ArgumentParser
import FogKit
import Foundation

/// `fog query`: runs a query on a store and prints the records, or the plan.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Query records with CloudKit's predicate language.",
        discussion: """
            Examples:
              fog query Note --user alice --zone Notes --where "tags CONTAINS 'leisure'" --sort title
              fog query Post --where "score > 10 AND author == 'a17'" --sort -createdAt --limit 10 --keys title
              fog query Post --where "score BETWEEN {1, 5}" --explain
            Values are literals in the predicate ('text', 12, 1.5, CAST(…, "NSDate")); `%@` arguments \
            are for the library.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The record type.")
    var recordType: String

    @Option(name: .customLong("where"), help: "The predicate (default TRUEPREDICATE).")
    var predicate: String = "TRUEPREDICATE"

    @Option(
        name: .long, parsing: .unconditionalSingleValue,
        help: "A sort key: `field` ascending, `-field` descending, `field~LAT,LON` by distance. Repeatable.")
    var sort: [String] = []

    @Option(name: .long, help: "The most records to return (default: FogKit's batch size, 100).")
    var limit: Int = 0

    @Flag(name: .long, help: "Follow cursors until every match is printed.")
    var all = false

    @Option(name: .long, help: "The fields to print, comma-separated (default all).")
    var keys: String?

    @Option(name: .long, help: "The zone (default: every zone of the database, as in CloudKit; the shared database needs one).")
    var zone: String?

    @OptionGroup var target: DatabaseOptions

    @OptionGroup var environment: EnvironmentOptions

    @Flag(name: .long, help: "Print how the query would run instead of running it.")
    var explain = false

    func run() async throws {
        let (admin, container, db) = try target.open(store, configuration: environment.applied())
        defer {
            container.close()
            admin.close()
        }
        let query = Query(recordType: recordType, predicate: try QueryPredicate(format: predicate))
        query.sortDescriptors = try sort.map(Self.sortDescriptor)
        let zoneID = zone.map { RecordZone.ID(zoneName: $0) }
        let desiredKeys = keys.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
        if explain {
            print(try db.explain(query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: limit))
            return
        }
        var (matches, cursor) = try await db.records(matching: query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: limit)
        var count = 0
        while true {
            for (_, result) in matches {
                print(Self.render(try result.get()))
                count += 1
            }
            guard all, let next = cursor else { break }
            (matches, cursor) = try await db.records(continuingMatchFrom: next, desiredKeys: desiredKeys, resultsLimit: limit)
        }
        print("\(count) record\(count == 1 ? "" : "s")\(cursor != nil && !all ? " (more: use --all)" : "")")
        for advice in admin.indexAdvice() {
            print("note: no index for \(advice.recordType).\(advice.field) (\(advice.options)); in production this query fails")
        }
    }

    static func sortDescriptor(_ text: String) throws -> Query.SortDescriptor {
        if let tilde = text.firstIndex(of: "~") {
            let parts = text[text.index(after: tilde)...].split(separator: ",").compactMap { Double($0) }
            guard parts.count == 2 else { throw ValidationError("a distance sort is FIELD~LATITUDE,LONGITUDE, not \(text)") }
            return LocationSortDescriptor(key: String(text[..<tilde]), relativeLocation: Location(latitude: parts[0], longitude: parts[1]))
        }
        if text.hasPrefix("-") { return Query.SortDescriptor(key: String(text.dropFirst()), ascending: false) }
        return Query.SortDescriptor(key: text.hasPrefix("+") ? String(text.dropFirst()) : text, ascending: true)
    }

    /// `recordName  key=value  key=value`.
    static func render(_ record: Record) -> String {
        var parts = [record.recordID.recordName]
        for key in record.allKeys().sorted() {
            parts.append("\(key)=\(render(record[key]))")
        }
        return parts.joined(separator: "  ")
    }

    private static func render(_ value: (any RecordValueProtocol)?) -> String {
        guard let value else { return "nil" }
        switch value {
        case let s as String: return PredicateLiteral.quoted(s)
        case let r as Record.Reference: return "->" + r.recordID.recordName
        case let list as [String]: return "[" + list.map(PredicateLiteral.quoted).joined(separator: ", ") + "]"
        default: return "\(value)"
        }
    }
}

/// Quoting for printed strings.
enum PredicateLiteral {
    static func quoted(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
