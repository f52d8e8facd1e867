import FogStorage
import Foundation

/// How far a copy of a store has come (``Container/Administrator/copyStore(to:progress:)``).
public struct StoreCopyProgress: Sendable, Hashable, CustomStringConvertible {
    /// The schema environment being copied.
    public var environment: Container.Environment
    /// The table being copied (`assets` for the assets' bytes).
    public var table: String
    /// The entries (or assets) of ``table`` copied so far.
    public var copied: Int
    /// The entries (or assets) ``table`` holds.
    public var total: Int

    /// Creates a progress report.
    public init(environment: Container.Environment, table: String, copied: Int, total: Int) {
        self.environment = environment
        self.table = table
        self.copied = copied
        self.total = total
    }

    /// `environment table copied/total`.
    public var description: String { "\(environment) \(table) \(copied)/\(total)" }
}

extension Maintenance where Store == OpenedStore {
    /// The entries a write of the copy holds at most.
    static var copyBatchEntries: Int { 2_000 }
    /// The bytes a write of the copy holds at most (keys and values).
    static var copyBatchBytes: Int { 4 << 20 }

    /// Copies every table of the store, as of one snapshot, into a new store at `destination`,
    /// with its assets: files or the database's chunks on either side. The copy gets a new
    /// incarnation, so change tokens of this store fail against it with `changeTokenExpired`
    /// and clients fetch again rather than miss a change. `meta` is written last: a copy cut
    /// short is not a FogKit store, and opening it says so.
    func copy(to destination: StoreLocation, environment: Container.Environment, progress: (StoreCopyProgress) -> Void) throws {
        if destination.storeExists() {
            throw FogError(.invalidArguments, message: "\(destination) already holds a store; copy into an empty place")
        }
        let target: OpenedStore
        do {
            target = try OpenedStore.open(
                at: destination,
                configuration: Layout.configuration(durability: .none, createsMissingTables: true, keepsAssets: !destination.isDirectory))
        } catch {
            throw FogError.wrapping(error)
        }
        defer { target.close() }
        let sourceChunks = core.assetChunks
        let targetChunks = destination.isDirectory ? nil : target.table(named: Layout.assetChunks)
        let targetAssets = destination.url.appendingPathComponent("assets", isDirectory: true)
        if destination.isDirectory { try FileManager.default.createDirectory(at: targetAssets, withIntermediateDirectories: true) }
        // Held while the snapshot's asset files are copied, so no collection deletes one.
        let lock = sourceChunks == nil ? AssetLock.shared(in: assetDirectory) : nil
        defer { lock?.release() }
        try mapStorageErrors {
            try store.read { txn in
                var tables = Layout.allTables.filter { $0 != Layout.meta }
                if sourceChunks != nil, targetChunks != nil { tables.append(Layout.assetChunks) }
                for name in tables {
                    try copyTable(name, txn: txn, into: target, environment: environment, progress: progress)
                }
                try copyAssets(
                    txn: txn, sourceChunks: sourceChunks, into: target, chunks: targetChunks, folder: targetAssets,
                    environment: environment, progress: progress)
                // `meta` last, with a new incarnation.
                let metaTable = target.table(named: Layout.meta)
                var entries: [([UInt8], [UInt8])] = []
                try txn.scan(meta) { key, value in
                    entries.append((Array(key), Array(value)))
                    return true
                }
                try target.sync()
                let incarnation = Layout.newIncarnation()
                try target.writeAndWait { w in
                    for (key, value) in entries {
                        try w.put(key == Layout.metaIncarnation ? incarnation : value, forKey: key, in: metaTable)
                    }
                }
                try target.sync()
                progress(StoreCopyProgress(environment: environment, table: Layout.meta, copied: entries.count, total: entries.count))
            }
        }
    }

    /// Copies the table `name` in batches.
    private func copyTable(
        _ name: String, txn: Store.ReadTransaction, into target: OpenedStore, environment: Container.Environment,
        progress: (StoreCopyProgress) -> Void
    ) throws {
        let source = store.table(named: name)
        let destination = target.table(named: name)
        let multiValue = Layout.tableLayouts[name]?.isMultiValue ?? false
        let total = try txn.count(of: source)
        var copied = 0
        var batch: [([UInt8], [UInt8])] = []
        var bytes = 0
        func flush() throws {
            guard !batch.isEmpty else { return }
            let entries = batch
            try target.writeAndWait { w in
                for (key, value) in entries {
                    if multiValue {
                        try w.addValue(value, forKey: key, in: destination, appending: true)
                    } else {
                        try w.put(value, forKey: key, in: destination)
                    }
                }
            }
            copied += entries.count
            batch.removeAll(keepingCapacity: true)
            bytes = 0
            progress(StoreCopyProgress(environment: environment, table: name, copied: copied, total: total))
        }
        try txn.scan(source) { key, value in
            batch.append((Array(key), Array(value)))
            bytes += key.count + value.count
            if batch.count >= Self.copyBatchEntries || bytes >= Self.copyBatchBytes { try flush() }
            return true
        }
        try flush()
        if total == 0 { progress(StoreCopyProgress(environment: environment, table: name, copied: 0, total: 0)) }
    }

    /// Copies the bytes of every referenced asset: file to file, file to chunks, or chunks to
    /// file (chunks to chunks went with the `assetChunks` table).
    private func copyAssets(
        txn: Store.ReadTransaction, sourceChunks: Table?, into target: OpenedStore, chunks targetChunks: Table?, folder: URL,
        environment: Container.Environment, progress: (StoreCopyProgress) -> Void
    ) throws {
        if sourceChunks != nil, targetChunks != nil { return }
        var names: [String] = []
        try txn.scan(recordStore.assets.table) { key, _ in
            names.append(String(decoding: key, as: UTF8.self))
            return true
        }
        for (i, name) in names.enumerated() where AssetNames.isStoredName(name) {
            switch (sourceChunks, targetChunks) {
            case (nil, nil):
                let destination = folder.appendingPathComponent(name)
                if !FileManager.default.fileExists(atPath: destination.path) {
                    try FileManager.default.copyItem(at: assetDirectory.appendingPathComponent(name), to: destination)
                }
            case (nil, let chunks?):
                let file = assetDirectory.appendingPathComponent(name)
                try target.writeAndWait { w in try AssetChunks.store(name, from: file, into: chunks, txn: w) }
            case (let chunks?, nil):
                guard try AssetChunks.materialize(name, to: folder.appendingPathComponent(name), from: chunks, txn: txn) else {
                    throw FogError(.internalError, message: "asset \(name) is referenced but its bytes are not in the store")
                }
            case (_?, _?):
                break
            }
            progress(StoreCopyProgress(environment: environment, table: "assets", copied: i + 1, total: names.count))
        }
    }
}
