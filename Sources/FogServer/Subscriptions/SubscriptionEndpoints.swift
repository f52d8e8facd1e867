import FogKit
import Foundation

/// `subscriptions/list`, `subscriptions/lookup` and `subscriptions/modify`: the caller's
/// subscriptions in the database of the path, through FogKit's own rules (which kinds each
/// database allows, that a subscription is its user's).
enum SubscriptionEndpoints {
    static var table: [String: Endpoint] {
        [
            "subscriptions/list": .get(list),
            "subscriptions/lookup": .post(lookup),
            "subscriptions/modify": .post(modify),
        ]
    }

    /// The most operations or IDs one request may hold.
    static let maximumItems = 200

    static func error(_ error: any Error, id: String, call: EndpointCall) -> JSON {
        ServerError(error, signIn: call.state.signInURL).item([("subscriptionID", .string(id))])
    }

    /// `subscriptions/list`: every subscription of the caller in the database, by ID.
    @Sendable static func list(_ call: EndpointCall) async throws -> JSON {
        let output = RecordOutput(call, callerRecordName: await call.callerRecordName())
        let all = try await call.database.allSubscriptions()
        return .object([("subscriptions", .array(all.map { SubscriptionDictionary.json($0, output: output) }))])
    }

    struct LookupRequest: Decodable {
        struct Item: Decodable {
            var subscriptionID: String
        }
        var subscriptions: [Item]
    }

    /// `subscriptions/lookup`: the subscriptions asked for, in order, each one or `NOT_FOUND`.
    @Sendable static func lookup(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(LookupRequest.self)
        guard request.subscriptions.count <= maximumItems else {
            throw ServerError(.badRequest, "\(request.subscriptions.count) subscriptions in one lookup; the limit is \(maximumItems)")
        }
        let output = RecordOutput(call, callerRecordName: await call.callerRecordName())
        let ids = request.subscriptions.map(\.subscriptionID)
        let found = try await call.database.subscriptions(for: ids)
        var results: [JSON] = []
        for id in ids {
            switch found[id] {
            case .success(let subscription)?: results.append(SubscriptionDictionary.json(subscription, output: output))
            case .failure(let e)?: results.append(error(e, id: id, call: call))
            case nil: results.append(error(FogError(.unknownItem, message: "no subscription \(id)"), id: id, call: call))
            }
        }
        return .object([("subscriptions", .array(results))])
    }

    struct ModifyRequest: Decodable {
        struct Operation: Decodable {
            var operationType: String
            var subscription: SubscriptionDictionary
        }
        var operations: [Operation]
    }

    /// `subscriptions/modify`: creates, updates and deletes, one result per operation in
    /// order. `create` of an existing ID is `EXISTS`, `update` or `delete` of a missing one
    /// `NOT_FOUND`; a delete answers `{subscriptionID, deleted: true}`.
    @Sendable static func modify(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(ModifyRequest.self)
        guard !request.operations.isEmpty else { throw ServerError(.badRequest, "operations is empty") }
        guard request.operations.count <= maximumItems else {
            throw ServerError(.badRequest, "\(request.operations.count) operations in one request; the limit is \(maximumItems)")
        }
        guard call.caller.user != nil else {
            throw ServerError(.authenticationRequired, "subscriptions are a user's; sign in", redirectURL: call.state.signInURL)
        }
        let me = await call.callerRecordName()
        let output = RecordOutput(call, callerRecordName: me)
        var results: [JSON] = []
        for (i, operation) in request.operations.enumerated() {
            let path = "operations[\(i)].subscription"
            let given = operation.subscription.subscriptionID
            let id = given ?? UUID().uuidString
            do {
                results.append(try await apply(operation, id: id, given: given != nil, call: call, me: me, output: output, path: path))
            } catch {
                results.append(self.error(error, id: id, call: call))
            }
        }
        return .object([("subscriptions", .array(results))])
    }

    private static func apply(
        _ operation: ModifyRequest.Operation, id: String, given: Bool, call: EndpointCall, me: String?, output: RecordOutput,
        path: String
    ) async throws -> JSON {
        let database = call.database
        func exists() async throws -> Bool {
            if case .success? = try await database.subscriptions(for: [id])[id] { return true }
            return false
        }
        switch operation.operationType {
        case "create", "update":
            if operation.operationType == "create", given, try await exists() {
                throw ServerError(.exists, "subscription \(id) exists; update it instead")
            }
            if operation.operationType == "update" {
                guard given else { throw ServerError(.badRequest, "\(path).subscriptionID: an update names its subscription") }
                guard try await exists() else { throw FogError(.unknownItem, message: "no subscription \(id) to update") }
            }
            let subscription = try operation.subscription.subscription(id: id, call: call, callerRecordName: me, path: path)
            return SubscriptionDictionary.json(try await database.save(subscription), output: output)
        case "delete":
            guard given else { throw ServerError(.badRequest, "\(path).subscriptionID: a delete names its subscription") }
            _ = try await database.deleteSubscription(withID: id)
            return .object([("subscriptionID", .string(id)), ("deleted", .bool(true))])
        default:
            throw ServerError(.badRequest, "operations: unknown subscription operation \"\(operation.operationType)\"")
        }
    }
}
