import FogStorage
import Foundation

extension Container.Administrator {
    /// The longest document a store keeps (``updateStoreDocument(named:_:)``): 1 MiB.
    public static let maximumStoreDocumentSize = 1 << 20

    /// The document `name` the store keeps for the program that serves it, or `nil` when
    /// there is none.
    ///
    /// Store documents are small blobs kept in the store itself, beside the container's data
    /// and never visible through a database: FogServer keeps its credentials in one when its
    /// store is on a database server, so that every server process sharing the store sees the
    /// same ones. A name is 1 to 200 bytes.
    public func storeDocument(named name: String) throws -> Data? {
        try authorize(.readStoreDocument)
        let key = try Self.documentKey(name)
        let engine = self.engine
        return try fogTry { try engine.core.store.read { txn in try txn.value(forKey: key, in: engine.core.meta).map { Data($0) } } }
    }

    /// Changes the document `name` in one write transaction and returns what `change`
    /// returned: `change` gets the stored bytes (`nil` when there are none) and sets what is
    /// kept (`nil` removes the document). Concurrent updates, from this process or another,
    /// are serialised, and `change` may run more than once (when the store retries the
    /// transaction), so it must not have effects outside its argument.
    ///
    /// - Throws: ``FogError/Code/invalidArguments`` for a bad name or a document over
    ///   ``maximumStoreDocumentSize``; what `change` throws, with nothing changed.
    public func updateStoreDocument<T>(named name: String, _ change: (inout Data?) throws -> T) throws -> T {
        try authorize(.changeStoreDocument)
        let key = try Self.documentKey(name)
        let engine = self.engine
        let meta = engine.core.meta
        // Optimistic: `change` runs outside the transaction, which commits only when the
        // document is still the one `change` saw; otherwise `change` runs again on the newer one.
        while true {
            let seen = try fogTry { try engine.core.store.read { txn in try txn.value(forKey: key, in: meta) } }
            var document = seen.map { Data($0) }
            let result = try change(&document)
            if let document, document.count > Self.maximumStoreDocumentSize {
                throw FogError(
                    .invalidArguments,
                    message: "store document \(name) would be \(document.count) bytes; at most \(Self.maximumStoreDocumentSize)")
            }
            let next = document.map { Array($0) }
            let committed = try fogTry {
                try engine.core.store.writeAndWait { txn -> Bool in
                    guard try txn.value(forKey: key, in: meta) == seen else { return false }
                    if let next { try txn.put(next, forKey: key, in: meta) } else { try txn.delete(key, in: meta) }
                    return true
                }
            }
            if committed { return result }
        }
    }

    /// The `meta` key of document `name`.
    private static func documentKey(_ name: String) throws(FogError) -> [UInt8] {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 200, !bytes.contains(0) else {
            throw FogError(.invalidArguments, message: "a store document's name must be 1 to 200 bytes without NUL; got \"\(name)\"")
        }
        return Layout.metaDocumentPrefix + bytes
    }
}
