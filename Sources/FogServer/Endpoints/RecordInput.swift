import FogKit
import Foundation
import HTTPTypes
import Hummingbird

/// Records made from a modify request's record dictionaries.
enum RecordInput {
    /// The record `dictionary` describes, in `zone`; a field sent as `{}` is removed.
    ///
    /// An asset (or list of assets) carrying a `receipt` of this server becomes a FogKit
    /// ``Asset`` of the uploaded (or rereferenced) bytes, and one carrying a download URL
    /// of this server an asset of the stored file it names; a forged or expired receipt,
    /// or one of another environment, database or user, is `BAD_REQUEST`.
    static func record(from dictionary: WebServices.RecordDictionary, zone: RecordZone.ID, call: EndpointCall) throws -> Record {
        var dictionary = dictionary
        var assets: [(String, FieldValue)] = []
        for (key, field) in dictionary.fields {
            guard let value = field.value, let converted = try assetValue(value, field: "fields.\(key).value", call: call) else {
                continue
            }
            assets.append((key, converted))
            dictionary.fields[key] = nil
        }
        let record = try Record(dictionary, zoneID: zone)
        for (key, field) in dictionary.fields where field.value == nil {
            record.setFieldValue(nil, forKey: key)
        }
        for (key, value) in assets { record.setFieldValue(value, forKey: key) }
        return record
    }

    /// The asset value of a field whose assets this server must resolve, or `nil` for a
    /// field FogKit's own conversion handles.
    static func assetValue(_ value: WebServices.Value, field: String, call: EndpointCall) throws -> FieldValue? {
        switch value {
        case .asset(let dictionary):
            guard ownsAsset(dictionary, call: call) else { return nil }
            return .asset(try asset(dictionary, field: field, call: call))
        case .list(let items):
            guard !items.isEmpty else { return nil }
            var dictionaries: [WebServices.AssetDictionary] = []
            for item in items {
                guard case .asset(let dictionary) = item else { return nil }
                dictionaries.append(dictionary)
            }
            guard dictionaries.contains(where: { ownsAsset($0, call: call) }) else { return nil }
            return .assetList(
                try dictionaries.enumerated().map { i, dictionary in try asset(dictionary, field: "\(field)[\(i)]", call: call) })
        default:
            return nil
        }
    }

    /// Whether the server resolves this asset: it has a receipt, or a download URL of this
    /// server.
    static func ownsAsset(_ dictionary: WebServices.AssetDictionary, call: EndpointCall) -> Bool {
        if dictionary.receipt != nil { return true }
        return dictionary.downloadURL?.hasPrefix(call.state.baseURL + AssetLinks.downloadPrefix) == true
    }

    static func asset(_ dictionary: WebServices.AssetDictionary, field: String, call: EndpointCall) throws -> Asset {
        let state = call.state
        if let text = dictionary.receipt {
            guard let receipt = Capability.decode(AssetLinks.Receipt.self, from: text, purpose: .receipt, secret: state.credentials.secret)
            else { throw ServerError(.badRequest, "\(field).receipt is not a receipt of this server") }
            guard receipt.expires > Date().timeIntervalSince1970 else {
                throw ServerError(.badRequest, "\(field).receipt expired; upload the asset again")
            }
            guard receipt.environment == call.route.environment.rawValue, receipt.database == AssetLinks.name(call.route.scope),
                receipt.user == call.caller.user
            else {
                throw ServerError(.badRequest, "\(field).receipt was issued for another environment, database or user")
            }
            state.staging.sweepIfDue()
            guard let url = state.staging.file(for: receipt, environment: call.route.environment) else {
                throw ServerError(.badRequest, "\(field): the uploaded file is no longer kept; upload the asset again")
            }
            return Asset(fileURL: url)
        }
        // A download URL this server handed out: the stored file it names.
        let url = dictionary.downloadURL ?? ""
        let token = url.dropFirst((state.baseURL + AssetLinks.downloadPrefix).count).split(separator: "/").first.map(String.init) ?? ""
        guard let download = Capability.decode(AssetLinks.Download.self, from: token, purpose: .download, secret: state.credentials.secret),
            !download.path.hasPrefix("/"), !download.path.split(separator: "/").contains("..")
        else { throw ServerError(.badRequest, "\(field).downloadURL is not a download URL of this server") }
        guard download.expires > Date().timeIntervalSince1970 else {
            throw ServerError(.badRequest, "\(field).downloadURL expired; fetch the record again")
        }
        return Asset(fileURL: state.store.directory.appendingPathComponent(download.path))
    }
}
