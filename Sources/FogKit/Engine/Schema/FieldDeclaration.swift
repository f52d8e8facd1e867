/// A field's entry in the catalog (`schema` table, `("f", type, field)`): the type its
/// values have, and what the schema language says beyond it.
///
/// Stored as one byte, the ``FieldType`` code, when the declaration is the plain type (as
/// just-in-time fields are), or as two: the code (0 while a `NUMBER` is not pinned to a
/// representation yet) and ``Flags``.
struct FieldDeclaration: Sendable, Hashable {
    /// The type of the field's values; `nil` for a `NUMBER` without `PREFERRED AS` that no
    /// save has pinned yet.
    var type: FieldType?
    var flags: Flags = []

    struct Flags: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        /// `ENCRYPTED …`.
        static let encrypted = Flags(rawValue: 1)
        /// Declared `NUMBER` (with or without `PREFERRED AS`).
        static let number = Flags(rawValue: 2)
        /// A list, for an unpinned `LIST<NUMBER>` (a pinned type says it itself).
        static let list = Flags(rawValue: 4)
        /// Removed from the schema by an import while records may still hold values of the
        /// type: not part of the schema, but a save or an import may bring the field back only
        /// with this type.
        static let retired = Flags(rawValue: 8)
        static let all: Flags = [.encrypted, .number, .list, .retired]
    }

    init(type: FieldType?, flags: Flags = []) {
        self.type = type
        self.flags = flags
    }

    /// Decodes a stored entry.
    init(_ bytes: [UInt8]) throws {
        guard bytes.count == 1 || bytes.count == 2 else { throw FormatError(message: "field type entry of \(bytes.count) bytes") }
        let flags = bytes.count == 2 ? Flags(rawValue: bytes[1]) : []
        guard Flags.all.isSuperset(of: flags) else { throw FormatError(message: "field type entry with flags \(flags.rawValue)") }
        if bytes[0] == 0 {
            guard flags.contains(.number) else { throw FormatError(message: "field type entry without a type") }
            self.init(type: nil, flags: flags)
        } else {
            guard let type = FieldType(rawValue: bytes[0]) else { throw FormatError(message: "unknown field type code \(bytes[0])") }
            self.init(type: type, flags: flags)
        }
    }

    var encoded: [UInt8] {
        flags.isEmpty ? [type?.rawValue ?? 0] : [type?.rawValue ?? 0, flags.rawValue]
    }

    /// The declaration of a schema field of `dataType`.
    init(_ dataType: Schema.DataType) {
        var flags: Flags = []
        let base: FieldType?
        switch dataType.element {
        case .asset: base = .asset
        case .bytes: base = .bytes
        case .double: base = .double
        case .int64: base = .int64
        case .location: base = .location
        case .reference: base = .reference
        case .string: base = .string
        case .timestamp: base = .timestamp
        case .encrypted(let type):
            flags.insert(.encrypted)
            switch type {
            case .bytes: base = .bytes
            case .double: base = .double
            case .int64: base = .int64
            case .location: base = .location
            case .string: base = .string
            case .timestamp: base = .timestamp
            }
        case .number(let representation):
            flags.insert(.number)
            switch representation {
            case .int64: base = .int64
            case .double: base = .double
            case nil: base = nil
            }
        }
        if let base {
            self.init(type: dataType.isList ? FieldType(rawValue: base.rawValue | 0x10) : base, flags: flags)
        } else {
            self.init(type: nil, flags: dataType.isList ? flags.union(.list) : flags)
        }
    }

    /// The field's type in the schema language.
    var dataType: Schema.DataType {
        let isList = type.map { $0.rawValue & 0x10 != 0 } ?? flags.contains(.list)
        let element: Schema.PrimitiveType
        if flags.contains(.number) {
            switch type.map({ FieldType(rawValue: $0.rawValue & 0x0F) }) {
            case .int64?: element = .number(preferredAs: .int64)
            case .double?: element = .number(preferredAs: .double)
            default: element = .number(preferredAs: nil)
            }
        } else {
            let base = type.flatMap { FieldType(rawValue: $0.rawValue & 0x0F) } ?? .string
            let plain: Schema.PrimitiveType
            switch base {
            case .asset: plain = .asset
            case .bytes: plain = .bytes
            case .double: plain = .double
            case .int64: plain = .int64
            case .location: plain = .location
            case .reference: plain = .reference
            case .timestamp: plain = .timestamp
            default: plain = .string
            }
            if flags.contains(.encrypted), let encryptable = Schema.EncryptableType(rawValue: plain.description) {
                element = .encrypted(encryptable)
            } else {
                element = plain
            }
        }
        return isList ? .list(element) : .primitive(element)
    }

    /// Whether an import removed the field (see ``Flags/retired``).
    var isRetired: Bool { flags.contains(.retired) }

    /// The declaration marked removed.
    var retired: FieldDeclaration { FieldDeclaration(type: type, flags: flags.union(.retired)) }

    /// Whether a value of `type` may be saved in the field: the declared type, or a number of
    /// the declared list-ness for a `NUMBER` not pinned yet.
    func accepts(_ type: FieldType) -> Bool {
        if let declared = self.type { return declared == type }
        let current = FieldDeclaration(type: nil, flags: flags.subtracting(.retired))
        return current.canBecome(current.pinned(to: type))
    }

    /// The declaration after a save of a value of `type` (which it ``accepts(_:)``): pinned,
    /// and no longer retired.
    func saved(as type: FieldType) -> FieldDeclaration {
        FieldDeclaration(type: type, flags: flags.subtracting([.list, .retired]))
    }

    /// Whether a save may turn this declaration into `other`: only by pinning a `NUMBER`. A
    /// retired declaration may become the same declaration again.
    func canBecome(_ other: FieldDeclaration) -> Bool {
        if isRetired { return FieldDeclaration(type: type, flags: flags.subtracting(.retired)).canBecome(other) }
        if self == other { return true }
        guard type == nil, let pinned = other.type else { return false }
        return other.flags == flags.subtracting(.list) && (pinned.rawValue & 0x10 != 0) == flags.contains(.list)
            && [FieldType.int64, .double].contains(FieldType(rawValue: pinned.rawValue & 0x0F))
    }

    /// This unpinned `NUMBER` pinned to `type`, the type of the first value saved.
    func pinned(to type: FieldType) -> FieldDeclaration {
        FieldDeclaration(type: type, flags: flags.subtracting(.list))
    }
}
