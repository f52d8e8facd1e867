import FogKit
import Foundation
import Hummingbird

/// The console's administration API: what is not a database operation, for the
/// administrator token only (header `X-FogKit-Administrator-Token`), at
/// `/admin/1/{container}/{environment}/…`:
///
/// | method and path | what it does |
/// |---|---|
/// | `GET /admin/1/containers` | `{containers: [identifier]}`, the one this server serves |
/// | `GET users` | the user directory: `{users: [{name, userRecordName, emailAddress?, givenName?, familyName?}]}` |
/// | `GET schema` | the environment's schema in the schema language: `{schema}` |
/// | `POST schema` `{schema}` | makes the text development's schema (development only) |
/// | `POST schema/deploy` | deploys development's schema to production; answers production's |
/// | `GET roles` | the schema's custom roles and their members: `{roles: [{name, members: [{userRecordName, name?}]}]}` |
/// | `POST roles/members` `{operationType: add or remove, role, user}` | changes a role's members; answers the roles |
///
/// Errors have CloudKit's error shape (``ServerError``).
enum AdministrationEndpoints {
    static func respond(to request: inout Request, path: String, state: ServerState) async throws -> Response {
        let parts = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        if parts == ["admin", "1", "containers"], request.method == .get {
            // The containers this server serves (one: its store's), for the console's picker.
            try Authenticator(state: state).checkAdministrator(request)
            return ServerResponder.json(.object([("containers", .array([.string(state.store.identifier)]))]))
        }
        guard parts.count >= 5, parts[0] == "admin", parts[1] == "1" else {
            throw ServerError(.notFound, "administration paths are /admin/1/{container}/{environment}/…")
        }
        try Authenticator(state: state).checkAdministrator(request)
        guard parts[2] == state.store.identifier else {
            throw ServerError(.notFound, "this server serves container \(state.store.identifier), not \(parts[2])")
        }
        guard let environment = Container.Environment(rawValue: parts[3]) else {
            throw ServerError(.notFound, "no environment \(parts[3]); development or production")
        }
        let action = parts[4...].joined(separator: "/")
        let body = try await ServerResponder.body(of: &request, limit: state.configuration.maximumBodySize)
        let call = Call(state: state, environment: environment, body: body)
        let result: JSON
        switch (request.method, action) {
        case (.get, "users"): result = try call.users()
        case (.get, "schema"): result = try call.schema(environment)
        case (.post, "schema"): result = try await call.importSchema()
        case (.post, "schema/deploy"): result = try await call.deploy()
        case (.get, "roles"): result = try call.roles()
        case (.post, "roles/members"): result = try await call.changeMembers()
        default: throw ServerError(.notFound, "no administration endpoint \(request.method.rawValue) \(action)")
        }
        var response = ServerResponder.json(result)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    struct Call {
        let state: ServerState
        let environment: Container.Environment
        let body: [UInt8]

        /// The environment's administrator (roles and users are per environment).
        var administrator: Container.Administrator { get throws { try state.store.administrator(environment) } }
        /// The development store's administrator, which reads either schema and deploys.
        var development: Container.Administrator { get throws { try state.store.administrator(.development) } }

        func decode<T: Decodable>(_ type: T.Type, _ shape: String) throws -> T {
            do {
                return try JSONDecoder().decode(type, from: Data(body))
            } catch {
                throw ServerError(.badRequest, "the request body is not \(shape)")
            }
        }

        func users() throws -> JSON {
            let administrator = try administrator
            var users: [JSON] = []
            for (name, identity) in try administrator.users().sorted(by: { $0.key < $1.key }) {
                var members: [(String, JSON)] = [("name", .string(name))]
                let recordName = try identity.userRecordID?.recordName ?? administrator.userRecordID(forUser: name).recordName
                members.append(("userRecordName", .string(recordName)))
                if let email = identity.lookupInfo?.emailAddress { members.append(("emailAddress", .string(email))) }
                if let given = identity.nameComponents?.givenName { members.append(("givenName", .string(given))) }
                if let family = identity.nameComponents?.familyName { members.append(("familyName", .string(family))) }
                users.append(.object(members))
            }
            return .object([("users", .array(users))])
        }

        func schema(_ environment: Container.Environment) throws -> JSON {
            .object([
                ("environment", .string(environment.rawValue)), ("schema", .string(try development.schema(for: environment).description)),
            ])
        }

        func importSchema() async throws -> JSON {
            guard environment == .development else {
                throw ServerError(.badRequest, "only development's schema is edited; production changes by deploying")
            }
            struct Body: Decodable { var schema: String }
            let text = try decode(Body.self, "{\"schema\": \"…\"}").schema
            let schema: Schema
            do {
                schema = try Schema(parsing: text)
            } catch {
                throw ServerError(.badRequest, "\(error.line):\(error.column): \(error.message)")
            }
            try await development.importSchema(schema)
            return try self.schema(.development)
        }

        func deploy() async throws -> JSON {
            try await development.deploySchema()
            return try schema(.production)
        }

        func roles() throws -> JSON {
            let administrator = try administrator
            let names = Dictionary(
                try administrator.users().keys.map { (try administrator.userRecordID(forUser: $0).recordName, $0) },
                uniquingKeysWith: { a, _ in a })
            var roles: [JSON] = []
            for role in try development.schema(for: environment).roles.sorted() {
                var members: [JSON] = []
                for member in try administrator.users(inRole: role) {
                    var item: [(String, JSON)] = [("userRecordName", .string(member.recordName))]
                    if let name = names[member.recordName] { item.append(("name", .string(name))) }
                    members.append(.object(item))
                }
                roles.append(.object([("name", .string(role.description)), ("members", .array(members))]))
            }
            return .object([("roles", .array(roles))])
        }

        func changeMembers() async throws -> JSON {
            struct Body: Decodable {
                var operationType: String
                var role: String
                var user: String
            }
            let change = try decode(Body.self, "{\"operationType\": \"add\" or \"remove\", \"role\": …, \"user\": …}")
            let administrator = try administrator
            guard try administrator.users()[change.user] != nil else {
                throw ServerError(.notFound, "no user \(change.user) in the \(environment) directory")
            }
            let id = try administrator.userRecordID(forUser: change.user)
            switch change.operationType {
            case "add": try await administrator.addUser(id, toRole: Schema.Role(change.role))
            case "remove": try await administrator.removeUser(id, fromRole: Schema.Role(change.role))
            default: throw ServerError(.badRequest, "operationType is add or remove, not \(change.operationType)")
            }
            return try roles()
        }
    }
}
