import Foundation

extension WebServices {
    /// How a conversion from FogKit values writes an asset's location: the string to put in
    /// the asset dictionary's `downloadURL`, or `nil` to leave it out.
    public typealias AssetLocator = (Asset) throws -> String?

    /// The default ``AssetLocator``: the asset's file URL (a `file:` URL).
    public static func fileURL(of asset: Asset) -> String? { asset.fileURL?.absoluteString }
}

extension WebServices.FieldValueDictionary {
    /// The dictionary of a FogKit value, typed; dates become milliseconds (rounded to the
    /// nearest one, as CloudKit keeps them) and each asset's `downloadURL` is what `locate`
    /// returns.
    /// - Throws: ``WebServices/FormatError`` for a double that is not finite, naming `field`,
    ///   or what `locate` throws.
    public init(_ value: FieldValue, field: String = "value", locate: WebServices.AssetLocator = WebServices.fileURL(of:)) throws {
        try self.init(value, path: field, locate: locate)
    }

    /// ``init(_:field:locate:)`` with the field's path made only for an error (a record's
    /// fields are converted on every response).
    init(_ value: FieldValue, path field: @autoclosure () -> String, locate: WebServices.AssetLocator) throws {
        typealias V = WebServices.Value
        func finite(_ d: Double, _ path: @autoclosure () -> String) throws(WebServices.FormatError) -> V {
            guard d.isFinite else { throw WebServices.FormatError(field: path(), reason: "\(d) is not a finite number") }
            return .double(d)
        }
        func asset(_ a: Asset) throws -> V {
            .asset(WebServices.AssetDictionary(downloadURL: try locate(a), size: a.byteCount))
        }
        let v: V
        switch value {
        case .string(let s): v = .string(s)
        case .int64(let i): v = .int64(i)
        case .double(let d): v = try finite(d, field())
        case .bytes(let b): v = .bytes(b)
        case .date(let d): v = .timestamp(Milliseconds.from(d))
        case .location(let l): v = .location(try Self.checked(l, field()))
        case .reference(let r): v = .reference(WebServices.ReferenceDictionary(r))
        case .asset(let a): v = try asset(a)
        case .stringList(let l): v = .list(l.map(V.string))
        case .int64List(let l): v = .list(l.map(V.int64))
        case .doubleList(let l): v = .list(try l.enumerated().map { try finite($1, "\(field())[\($0)]") })
        case .bytesList(let l): v = .list(l.map(V.bytes))
        case .dateList(let l): v = .list(l.map { .timestamp(Milliseconds.from($0)) })
        case .locationList(let l): v = .list(try l.enumerated().map { .location(try Self.checked($1, "\(field())[\($0)]")) })
        case .referenceList(let l): v = .list(l.map { .reference(WebServices.ReferenceDictionary($0)) })
        case .assetList(let l): v = .list(try l.map(asset))
        }
        self.init(value: v, type: WebServices.FieldType(value.fieldType))
    }

    private static func checked(
        _ l: Location, _ field: @autoclosure () -> String
    ) throws(WebServices.FormatError) -> WebServices.LocationDictionary {
        let numbers = [l.latitude, l.longitude, l.altitude, l.horizontalAccuracy, l.verticalAccuracy, l.course, l.speed]
        guard numbers.allSatisfy(\.isFinite) else {
            throw WebServices.FormatError(field: field(), reason: "a location with a number that is not finite")
        }
        return WebServices.LocationDictionary(l)
    }

    /// The FogKit value, or `nil` for `{}` (a cleared field).
    ///
    /// - Parameters:
    ///   - zone: The zone of references that name none (the record's own).
    ///   - assetBase: The folder that relative asset `downloadURL`s are in.
    ///   - field: The field's path, for errors.
    /// - Throws: ``WebServices/FormatError`` for a value FogKit cannot store: a `VALIDATE`
    ///   reference, an `UNKNOWN_LIST`, an asset without a usable `downloadURL`, or a value
    ///   that does not match the type.
    public func fieldValue(
        defaultZone zone: RecordZone.ID, assetBase: URL? = nil, field: String
    ) throws(WebServices.FormatError)
        -> FieldValue?
    {
        guard let value, let type else { return nil }
        typealias FormatError = WebServices.FormatError
        func mismatch(_ path: String) -> FormatError { FormatError(field: path, reason: "does not match its type \(type.rawValue)") }
        func items() throws(FormatError) -> [WebServices.Value] {
            guard case .list(let items) = value else { throw mismatch(field) }
            return items
        }
        func each<T>(_ body: (WebServices.Value, String) throws(FormatError) -> T?) throws(FormatError) -> [T] {
            let list = try items()
            var out: [T] = []
            out.reserveCapacity(list.count)
            for (i, item) in list.enumerated() {
                let path = "\(field)[\(i)]"
                guard let v = try body(item, path) else { throw mismatch(path) }
                out.append(v)
            }
            return out
        }
        switch (type, value) {
        case (.string, .string(let s)): return .string(s)
        case (.int64, .int64(let i)): return .int64(i)
        case (.double, .double(let d)): return .double(d)
        case (.double, .int64(let i)): return .double(Double(i))
        case (.timestamp, .timestamp(let t)), (.timestamp, .int64(let t)): return .date(Milliseconds.date(t))
        case (.bytes, .bytes(let b)): return .bytes(b)
        case (.location, .location(let l)): return .location(l.location)
        case (.reference, .reference(let r)): return .reference(try r.reference(defaultZone: zone, field: field))
        case (.assetID, .asset(let a)): return .asset(try a.asset(relativeTo: assetBase, field: field))
        case (.stringList, _): return .stringList(try each { v, _ in if case .string(let s) = v { s } else { nil } })
        case (.int64List, _): return .int64List(try each { v, _ in if case .int64(let i) = v { i } else { nil } })
        case (.doubleList, _):
            return .doubleList(
                try each { v, _ in
                    switch v {
                    case .double(let d): d
                    case .int64(let i): Double(i)
                    default: nil
                    }
                })
        case (.timestampList, _):
            return .dateList(
                try each { v, _ in
                    switch v {
                    case .timestamp(let t), .int64(let t): Milliseconds.date(t)
                    default: nil
                    }
                })
        case (.bytesList, _): return .bytesList(try each { v, _ in if case .bytes(let b) = v { b } else { nil } })
        case (.locationList, _): return .locationList(try each { v, _ in if case .location(let l) = v { l.location } else { nil } })
        case (.referenceList, _):
            return .referenceList(
                try each { (v, path) throws(FormatError) in
                    guard case .reference(let r) = v else { return nil }
                    return try r.reference(defaultZone: zone, field: path)
                })
        case (.assetIDList, _):
            return .assetList(
                try each { (v, path) throws(FormatError) in
                    guard case .asset(let a) = v else { return nil }
                    return try a.asset(relativeTo: assetBase, field: path)
                })
        case (.unknownList, _):
            throw FormatError(field: field, reason: "an UNKNOWN_LIST has no element type, and a FogKit list needs one")
        default: throw mismatch(field)
        }
    }
}

extension Asset {
    /// The asset's size: the stored copy's, or the source file's before saving (0 when unknown).
    var byteCount: Int64 {
        if storedName != nil { return storedSize }
        guard let path = fileURL?.path, let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber else {
            return 0
        }
        return size.int64Value
    }
}
