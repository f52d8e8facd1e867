import FogKit
import FogKitTesting
import Foundation
import HTTPTypes
import Hummingbird
import Testing

@testable import FogServer

/// A request's path and query as the server reads them on every request, against the plain
/// reading by `split` they replaced, on generated paths and queries.
@Suite struct RouteParsingTests {
    /// The route as `split` reads it (the reading before the one-pass parser).
    static func plainRoute(_ path: String) -> Route? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard parts.count >= 5, parts[1] == "1" else { return nil }
        let container = ServerResponder.decoded(parts[2])
        guard let environment = Container.Environment(rawValue: parts[3]) else { return nil }
        switch parts[0] {
        case "database":
            if parts[4] == "tokens" {
                return Route(container: container, environment: environment, scope: nil, endpoint: parts[4...].joined(separator: "/"))
            }
            guard parts.count >= 7, let scope = Route.scope(parts[4]) else { return nil }
            return Route(
                container: container, environment: environment, scope: parts[5] == "tokens" ? nil : scope,
                endpoint: parts[5...].joined(separator: "/"))
        case "device":
            return Route(container: container, environment: environment, scope: nil, endpoint: parts[4...].joined(separator: "/"))
        default: return nil
        }
    }

    /// The query as `split` reads it.
    static func plainQuery(_ query: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            result[ServerResponder.decoded(String(parts[0]))] = parts.count > 1 ? String(parts[1]) : ""
        }
        return result
    }

    static func request(query: String) -> Request {
        let head = HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/x?" + query)
        return Request(head: head, body: .init(buffer: .init()))
    }

    @Test(arguments: [
        ("/database/1/iCloud.a/development/public/records/query", "records/query", Database.Scope?.some(.public)),
        ("//database//1/iCloud.a/production/private//records/lookup/", "records/lookup", .some(.private)),
        ("/database/1/iCloud.a/development/public/users/lookup/email", "users/lookup/email", .some(.public)),
        ("/database/1/iCloud.a/development/tokens/create", "tokens/create", nil),
        ("/database/1/iCloud.a/development/public/tokens/register", "tokens/register", nil),
        ("/device/1/iCloud.a/development/tokens/create", "tokens/create", nil),
    ])
    func routes(_ path: String, endpoint: String, scope: Database.Scope?) throws {
        let route = try #require(Route(path: path))
        #expect(route.endpoint == endpoint)
        #expect(route.scope == scope)
        #expect(route.container == "iCloud.a")
    }

    @Test(arguments: [
        "/", "", "/database/1/iCloud.a", "/database/2/iCloud.a/development/public/records/query",
        "/database/1/iCloud.a/staging/public/records/query", "/database/1/iCloud.a/development/everyone/records/query",
        "/database/1/iCloud.a/development/public/records", "/other/1/iCloud.a/development/public/records/query",
    ])
    func refusesOtherPaths(_ path: String) {
        #expect(Route(path: path) == nil)
    }

    @Test func aPercentEncodedContainerIsDecoded() throws {
        #expect(try #require(Route(path: "/database/1/iCloud.a%2Eb/development/public/records/query")).container == "iCloud.a.b")
    }

    @Test func generatedPathsAndQueriesReadAsSplitReadsThem() {
        var random = SplitMix64(seed: 30)
        let pathPieces = [
            "/", "/", "//", "database", "device", "1", "iCloud.a", "iCloud%2Ea", "é", "development", "production", "public",
            "private", "shared", "tokens", "records", "query", "x",
        ]
        let queryPieces = ["&", "=", "a", "ckAPIToken", "ckWebAuthToken", "%2B", "%41", "b", "==", "&&", "+", "é"]
        for _ in 0..<3000 {
            let path = (0..<Int.random(in: 0...14, using: &random)).map { _ in pathPieces.randomElement(using: &random)! }.joined()
            #expect(Route(path: path) == Self.plainRoute(path), "\(path)")
            let query = (0..<Int.random(in: 1...10, using: &random)).map { _ in queryPieces.randomElement(using: &random)! }.joined()
            #expect(ServerResponder.queryParameters(Self.request(query: query)) == Self.plainQuery(query), "\(query)")
        }
    }
}
