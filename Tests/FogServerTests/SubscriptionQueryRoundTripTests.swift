import FogKit
import FogKitTesting
import Foundation
import Testing

/// A query subscription's `filterBy` survives `subscriptions/modify` → `list` → `lookup`:
/// FogKit keeps a predicate, and the server writes it back as the filters that made it.
@Suite struct SubscriptionQueryRoundTripTests {
    /// A filter as a client sends it (typed values, as `records/query` accepts them).
    static func filter(_ comparator: String, _ field: String, _ value: Any, _ type: String, distance: Double? = nil) -> [String: Any] {
        var filter: [String: Any] = ["comparator": comparator, "fieldValue": ["value": value, "type": type]]
        if ["recordName", "createdTimestamp", "modifiedTimestamp"].contains(field) {
            filter["systemFieldName"] = field
        } else {
            filter["fieldName"] = field
        }
        if let distance { filter["distance"] = distance }
        return filter
    }

    /// Values drawn from a seeded generator, so every round tries other strings and numbers.
    struct Values {
        var random: SplitMix64
        mutating func string() -> String {
            let alphabet = Array("aZ09 _-\"\\é✓/'")
            return String((0..<Int.random(in: 1...8, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
        }
        /// Letters and digits only: token searches need a token.
        mutating func word() -> String {
            let alphabet = Array("abcXYZ019")
            return String((0..<Int.random(in: 1...8, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
        }
        mutating func int() -> Int64 { Int64.random(in: -1_000_000...1_000_000, using: &random) }
        /// Never a whole number: a whole double reads back as INT64, as FogKit's parser folds `3.0` to `3`.
        mutating func double() -> Double { Double(int()) + 0.25 }
        mutating func timestamp() -> Int64 { Int64.random(in: 0...2_000_000_000_000, using: &random) }
        mutating func bytes() -> String { Data((0..<8).map { _ in UInt8.random(in: 0...255, using: &random) }).base64EncodedString() }
    }

    /// One filter per comparator the server accepts, over each value type it takes.
    static func filters(_ v: inout Values) -> [[String: Any]] {
        var filters: [[String: Any]] = []
        func scalar(_ type: String) -> Any {
            switch type {
            case "STRING": v.string()
            case "INT64": v.int()
            case "DOUBLE": v.double()
            default: v.timestamp()
            }
        }
        let scalars = ["STRING", "INT64", "DOUBLE", "TIMESTAMP"]
        for comparator in ["EQUALS", "NOT_EQUALS", "LESS_THAN", "LESS_THAN_OR_EQUALS", "GREATER_THAN", "GREATER_THAN_OR_EQUALS"] {
            for type in scalars { filters.append(filter(comparator, "f\(filters.count)", scalar(type), type)) }
        }
        filters.append(filter("EQUALS", "f\(filters.count)", v.bytes(), "BYTES"))
        filters.append(filter("NOT_EQUALS", "f\(filters.count)", ["recordName": v.string(), "action": "NONE"], "REFERENCE"))
        for comparator in ["IN", "NOT_IN"] {
            filters.append(filter(comparator, "f\(filters.count)", [v.string(), v.string()], "STRING_LIST"))
            filters.append(filter(comparator, "f\(filters.count)", [v.int(), v.int()], "INT64_LIST"))
            filters.append(filter(comparator, "f\(filters.count)", [v.double(), v.double()], "DOUBLE_LIST"))
            filters.append(filter(comparator, "f\(filters.count)", [v.timestamp()], "TIMESTAMP_LIST"))
        }
        for comparator in ["BEGINS_WITH", "NOT_BEGINS_WITH", "LIST_MEMBER_BEGINS_WITH", "NOT_LIST_MEMBER_BEGINS_WITH"] {
            filters.append(filter(comparator, "f\(filters.count)", v.string(), "STRING"))
        }
        for comparator in ["LIST_CONTAINS", "NOT_LIST_CONTAINS"] {
            for type in scalars { filters.append(filter(comparator, "f\(filters.count)", scalar(type), type)) }
        }
        for comparator in ["LIST_CONTAINS_ANY", "NOT_LIST_CONTAINS_ANY"] {
            filters.append(filter(comparator, "f\(filters.count)", [v.string(), v.string()], "STRING_LIST"))
            filters.append(filter(comparator, "f\(filters.count)", [v.int(), v.int()], "INT64_LIST"))
        }
        for comparator in ["CONTAINS_ANY_TOKENS", "CONTAINS_ALL_TOKENS"] {
            filters.append(filter(comparator, "allTokens", v.word(), "STRING"))
        }
        filters.append(filter("NEAR", "f\(filters.count)", ["latitude": 52.5, "longitude": 4.75], "LOCATION", distance: 1500))
        filters.append(filter("GREATER_THAN", "createdTimestamp", v.timestamp(), "TIMESTAMP"))
        filters.append(filter("EQUALS", "recordName", ["recordName": v.string(), "action": "NONE"], "REFERENCE"))
        return filters
    }

    /// A filter reduced to what a round trip keeps: references by record name (the response
    /// adds the zone ID), locations by latitude and longitude (it adds the other keys).
    static func normalized(_ filter: [String: Any]) -> NSDictionary {
        var filter = filter
        if var fieldValue = filter["fieldValue"] as? [String: Any] {
            func reduce(_ value: Any) -> Any {
                guard let dictionary = value as? [String: Any] else { return value }
                if let name = dictionary["recordName"] { return ["recordName": name] }
                return ["latitude": dictionary["latitude"] ?? 0, "longitude": dictionary["longitude"] ?? 0]
            }
            if let list = fieldValue["value"] as? [Any] {
                fieldValue["value"] = list.map(reduce)
            } else if let value = fieldValue["value"] {
                fieldValue["value"] = reduce(value)
            }
            filter["fieldValue"] = fieldValue
        }
        return filter as NSDictionary
    }

    static func subscription(_ id: String, _ filterBy: [[String: Any]], zone: String? = "Notes") -> [String: Any] {
        var subscription: [String: Any] = [
            "subscriptionID": id, "subscriptionType": "query", "query": ["recordType": "Note", "filterBy": filterBy],
            "firesOn": ["create", "delete"], "firesOnce": true, "zoneWide": zone == nil,
        ]
        if let zone { subscription["zoneID"] = ["zoneName": zone] }
        return subscription
    }

    @Test(.serialized, arguments: [UInt64(1), 2, 3])
    func everyComparatorComesBackFromListAndLookup(seed: UInt64) async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        _ = try await server.post(
            server.url("private", "zones/modify"),
            ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Notes"]]]]])
        var values = Values(random: SplitMix64(seed: seed))
        let sent = Self.filters(&values)
        // One subscription per filter, and one with all of them (an AND of every condition).
        var subscriptions = sent.enumerated().map { i, filter in Self.subscription("s\(i)", [filter]) }
        subscriptions.append(Self.subscription("all", sent))
        let created = try await server.post(
            server.url("private", "subscriptions/modify"),
            ["operations": subscriptions.map { ["operationType": "create", "subscription": $0] }])
        let createdResults = try #require(created.json["subscriptions"] as? [[String: Any]])
        #expect(createdResults.allSatisfy { $0["serverErrorCode"] == nil }, "\(created.text)")

        let list = try await server.get(server.url("private", "subscriptions/list"))
        let listed = try #require(list.json["subscriptions"] as? [[String: Any]])
        let lookup = try await server.post(
            server.url("private", "subscriptions/lookup"),
            ["subscriptions": subscriptions.map { ["subscriptionID": $0["subscriptionID"]!] }])
        let looked = try #require(lookup.json["subscriptions"] as? [[String: Any]])
        #expect(looked.count == subscriptions.count)
        let byID = Dictionary(listed.map { ($0["subscriptionID"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        for (i, expected) in subscriptions.enumerated() {
            let id = expected["subscriptionID"] as! String
            let sentFilters = ((expected["query"] as! [String: Any])["filterBy"] as! [[String: Any]]).map(Self.normalized)
            for (source, answer) in [("list", byID[id]), ("lookup", looked[i])] {
                let answer = try #require(answer, "\(source) has no \(id)")
                #expect(answer["subscriptionID"] as? String == id)
                #expect(answer["subscriptionType"] as? String == "query")
                let query = try #require(answer["query"] as? [String: Any], "\(source) \(id)")
                #expect(query["recordType"] as? String == "Note")
                let filters = try #require(query["filterBy"] as? [[String: Any]], "\(source) \(id): no filterBy")
                #expect(filters.map(Self.normalized) == sentFilters, "\(source) \(id): \(filters) ≠ \(sentFilters)")
                #expect(answer["firesOn"] as? [String] == ["create", "delete"])
                #expect(answer["firesOnce"] as? Bool == true)
                #expect(answer["zoneWide"] as? Bool == false)
                #expect((answer["zoneID"] as? [String: Any])?["zoneName"] as? String == "Notes")
            }
        }
    }

    @Test func listContainsAllComesBackAsOneListContainsPerItem() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let sent = Self.filter("LIST_CONTAINS_ALL", "tags", ["a", "b"], "STRING_LIST")
        _ = try await server.post(
            server.url("private", "subscriptions/modify"),
            ["operations": [["operationType": "create", "subscription": Self.subscription("s", [sent], zone: nil)]]])
        let lookup = try await server.post(server.url("private", "subscriptions/lookup"), ["subscriptions": [["subscriptionID": "s"]]])
        let query = try #require((lookup.json["subscriptions"] as? [[String: Any]])?.first?["query"] as? [String: Any], "\(lookup.text)")
        let filters = try #require(query["filterBy"] as? [[String: Any]])
        #expect(
            filters.map(Self.normalized) == [
                Self.normalized(Self.filter("LIST_CONTAINS", "tags", "a", "STRING")),
                Self.normalized(Self.filter("LIST_CONTAINS", "tags", "b", "STRING")),
            ])
    }

    @Test func aPredicateFilterByCannotExpressIsAnsweredWithoutFilterBy() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let alice = try Container(identifier: ServerHarness.container, directory: server.directory.url, user: "alice")
        defer { alice.close() }
        // BETWEEN and now() have no comparator; the answer leaves filterBy out rather than lying.
        let between = try QueryPredicate(format: "rank BETWEEN {1, 5}")
        let now = try QueryPredicate(format: "due < now()")
        let mixed = try QueryPredicate(format: "title == 'x' AND due < now()")
        for (id, predicate) in [("between", between), ("now", now), ("mixed", mixed)] {
            _ = try await alice.privateCloudDatabase.save(QuerySubscription(recordType: "Note", predicate: predicate, subscriptionID: id))
        }
        let lookup = try await server.post(
            server.url("private", "subscriptions/lookup"),
            ["subscriptions": [["subscriptionID": "between"], ["subscriptionID": "now"], ["subscriptionID": "mixed"]]])
        let found = try #require(lookup.json["subscriptions"] as? [[String: Any]])
        #expect(found.count == 3)
        for answer in found {
            let query = try #require(answer["query"] as? [String: Any], "\(answer)")
            #expect(query["recordType"] as? String == "Note")
            #expect(query["filterBy"] == nil, "\(answer)")
        }
    }
}
