import Foundation

/// A long-lived operation as the store keeps it: what kind it is, the database it works
/// on, its parameters and, once its work has committed, its outcome. The parameters and the
/// outcome are JSON the public API writes and reads (`LongLivedOperation.swift`); the engine
/// only keeps them.
struct StoredOperation: Sendable, Codable, Equatable {
    /// The version of this encoding.
    var version = 1
    /// The operation's class, as `LongLivedOperation.swift` names it.
    var kind: String
    /// The database scope's raw value.
    var scope: Int
    /// The operation's parameters.
    var parameters: Data
    /// The outcome of its work, written in the transaction that committed it (writes only).
    var outcome: Data?

    func encoded() throws -> [UInt8] { [UInt8](try JSONEncoder().encode(self)) }

    static func decode(_ buffer: UnsafeRawBufferPointer) throws -> StoredOperation {
        do {
            return try JSONDecoder().decode(StoredOperation.self, from: Data(buffer))
        } catch {
            throw FormatError(message: "a stored long-lived operation does not decode: \(error)")
        }
    }
}
