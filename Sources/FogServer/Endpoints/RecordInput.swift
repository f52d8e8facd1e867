import FogKit
import Foundation
import HTTPTypes
import Hummingbird

/// Records made from a modify request's record dictionaries.
enum RecordInput {
    /// The record `dictionary` describes, in `zone`; a field sent as `{}` is removed.
    static func record(from dictionary: WebServices.RecordDictionary, zone: RecordZone.ID, call: EndpointCall) throws -> Record {
        let record = try Record(dictionary, zoneID: zone)
        for (key, field) in dictionary.fields where field.value == nil {
            record.setFieldValue(nil, forKey: key)
        }
        return record
    }
}
