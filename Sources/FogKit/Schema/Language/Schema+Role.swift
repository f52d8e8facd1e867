extension Schema {
    /// A security role of the public database, named in `CREATE ROLE` and `GRANT … TO`.
    ///
    /// Three roles are built in; custom roles are created with `CREATE ROLE` and given to users
    /// by an administrator. Roles sort in canonical order: the built-in roles as
    /// ``creator``, ``authenticated``, ``world``, then custom roles by name.
    public struct Role: Sendable, Hashable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The role's name in the schema language, such as `Admin` or `_world`.
        public let name: String

        /// A role named `name`.
        public init(_ name: String) { self.name = name }

        /// A role named by a string literal.
        public init(stringLiteral name: String) { self.name = name }

        /// `"_creator"` (Creator): the user who created the record.
        public static let creator = Role("_creator")
        /// `"_icloud"` (Authenticated): any user signed in to iCloud.
        public static let authenticated = Role("_icloud")
        /// `"_world"` (World): everyone, signed in or not.
        public static let world = Role("_world")
        /// The built-in roles, in canonical order.
        public static let builtIn: [Role] = [.creator, .authenticated, .world]

        /// Whether the role is one of the three built-in roles.
        public var isBuiltIn: Bool { Self.builtIn.contains(self) }

        /// Canonical order: the built-in roles first (`_creator`, `_icloud`, `_world`), then
        /// custom roles by name.
        public static func < (lhs: Role, rhs: Role) -> Bool {
            let l = builtIn.firstIndex(of: lhs), r = builtIn.firstIndex(of: rhs)
            switch (l, r) {
            case (let l?, let r?): return l < r
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return lhs.name.utf8.lexicographicallyPrecedes(rhs.name.utf8)
            }
        }

        /// The role's name.
        public var description: String { name }
    }

    /// What a role may do with records of a type (`GRANT READ, CREATE, WRITE TO …`); write
    /// includes delete.
    public struct Permissions: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// The raw bits: 1 read, 2 create, 4 write.
        public let rawValue: UInt8

        /// Creates permissions from their raw bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// `READ`: fetch and query records.
        public static let read = Permissions(rawValue: 1)
        /// `CREATE`: save new records.
        public static let create = Permissions(rawValue: 2)
        /// `WRITE`: change and delete records.
        public static let write = Permissions(rawValue: 4)

        /// The permissions as a `GRANT` lists them, in the order `READ, CREATE, WRITE`.
        public var description: String {
            var words: [String] = []
            if contains(.read) { words.append("READ") }
            if contains(.create) { words.append("CREATE") }
            if contains(.write) { words.append("WRITE") }
            return words.joined(separator: ", ")
        }
    }
}
