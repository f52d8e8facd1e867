/// A named key space inside an ``Environment`` (an LMDB named database).
///
/// FogStorage says *table* where LMDB says *database*, because a database in
/// FogKit is a CloudKit scope (public, private or shared). Keys within a table are
/// kept in byte order. Obtain tables from ``Environment/table(named:)``; a table
/// handle stays valid until the environment closes.
public struct Table: Sendable, Hashable, CustomStringConvertible {
    /// The table's name.
    public let name: String
    let dbi: UInt32

    init(name: String, dbi: UInt32) {
        self.name = name
        self.dbi = dbi
    }

    /// The table's name.
    public var description: String { name }
}
