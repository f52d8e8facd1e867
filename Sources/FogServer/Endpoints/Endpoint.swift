import FogKit
import Foundation
import HTTPTypes
import Hummingbird

/// One Web Services endpoint: the methods it takes, its body limit and its handler.
struct Endpoint: Sendable {
    var methods: [HTTPRequest.Method]
    /// The largest body it accepts; `nil`: the server's ``FogServer/Configuration/maximumBodySize``.
    var bodyLimit: Int? = nil
    var handler: @Sendable (EndpointCall) async throws -> Response

    static func post(_ handler: @escaping @Sendable (EndpointCall) async throws -> JSON) -> Endpoint {
        Endpoint(methods: [.post]) { ServerResponder.json(try await handler($0)) }
    }

    static func get(_ handler: @escaping @Sendable (EndpointCall) async throws -> JSON) -> Endpoint {
        Endpoint(methods: [.get, .post]) { ServerResponder.json(try await handler($0)) }
    }
}

/// A request on its way to its endpoint: where it goes, who sent it, its body.
///
/// A class: endpoints hand the call to the closures and helpers that write their answers
/// (asset links capture it for every asset), and a reference is one retain where the
/// request's fields were a dozen.
final class EndpointCall: Sendable {
    let route: Route
    let caller: Caller
    let container: Container
    let body: [UInt8]
    let query: [String: String]
    let state: ServerState
    let request: Request

    init(
        route: Route, caller: Caller, container: Container, body: [UInt8], query: [String: String], state: ServerState,
        request: Request
    ) {
        self.route = route
        self.caller = caller
        self.container = container
        self.body = body
        self.query = query
        self.state = state
        self.request = request
    }

    /// The database of the path (the public one for the token calls).
    var database: Database { container.database(with: route.scope ?? .public) }

    /// The body as `T`, parsed as JSON whatever its content type says; an empty body is `{}`.
    func decode<T: Decodable>(_ type: T.Type) throws(ServerError) -> T { try decodedByJSONDecoder(type) }

    private func decodedByJSONDecoder<T: Decodable>(_ type: T.Type) throws(ServerError) -> T {
        let data = body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) ? Data("{}".utf8) : Data(body)
        do {
            return try WebServices.decode(type, from: data)
        } catch {
            throw ServerError(.badRequest, "the request body is not valid: \(error.description)")
        }
    }

    /// The body as `T`, read by ``JSONInput`` when it can and decoded by `JSONDecoder`
    /// otherwise (for anything the quick reading does not take, and for the error message).
    func decode<T: QuickDecodable>(_ type: T.Type) throws(ServerError) -> T {
        if let input = JSONInput(parsing: body), let value = T(input) { return value }
        return try decodedByJSONDecoder(type)
    }

    /// The caller's user record name, or `nil` for nobody.
    func callerRecordName() async -> String? {
        guard caller.user != nil else { return nil }
        return try? await container.userRecordID().recordName
    }

    /// A zone ID of a request as FogKit's: the caller's own record name as owner is the
    /// current user's default owner name.
    func zoneID(_ zone: WebServices.ZoneID?, callerRecordName: String?) -> RecordZone.ID {
        guard let zone else { return .default }
        if let owner = zone.ownerRecordName, owner != callerRecordName, owner != CurrentUserDefaultName, owner != RecordOutput.publicOwner {
            return RecordZone.ID(zoneName: zone.zoneName, ownerName: owner)
        }
        return RecordZone.ID(zoneName: zone.zoneName, ownerName: CurrentUserDefaultName)
    }
}

/// The Web Services endpoints, by path after the database segment.
enum Endpoints {
    static let table: [String: Endpoint] = {
        var table: [String: Endpoint] = [
            "records/query": .post(RecordEndpoints.query),
            "records/lookup": .post(RecordEndpoints.lookup),
            "records/modify": .post(RecordEndpoints.modify),
            "records/changes": .post(ChangeEndpoints.recordChanges),
            "records/resolve": .post(ShareEndpoints.resolve),
            "records/accept": .post(ShareEndpoints.accept),
            "zones/list": .get(ZoneEndpoints.list),
            "zones/lookup": .post(ZoneEndpoints.lookup),
            "zones/modify": .post(ZoneEndpoints.modify),
            "zones/changes": .post(ChangeEndpoints.zoneListChanges),
            "changes/database": .post(ChangeEndpoints.database),
            "changes/zone": .post(ChangeEndpoints.zone),
            "users/caller": .get(UserEndpoints.caller),
            "users/current": .get(UserEndpoints.current),
            "users/discover": .get(UserEndpoints.discover),
            "users/lookup/email": .post(UserEndpoints.lookupEmail),
            "users/lookup/id": .post(UserEndpoints.lookupID),
            "users/lookup/contacts": .post(UserEndpoints.lookupContacts),
        ]
        for (path, endpoint) in moreEndpoints { table[path] = endpoint }
        return table
    }()
}
