import FogStorage
import Foundation

/// Records that leave or enter a shared hierarchy when a save changes a `parent`
/// (`Docs/Sharing.md`, "The zone change feed"): the participants' zone change feeds report
/// the records that left as deleted and those that entered as changed.
extension ModifyRun {
    /// After the save of the existing record `name` (stored at `row`, the root of `share` or
    /// not) moved it from `oldParent` to `newParent`: when the hierarchy share that covers it
    /// changes, every record below it changes share with it. Each of them gets a new change
    /// tag and a change log entry at this request's position (the moved record has them
    /// already), and each record that left a share is marked with it
    /// (`Layout.sharedMoveKey`), so the share's participants learn that it left.
    ///
    /// Runs only for saves that change a `parent`, and reads the zone's record headers only
    /// when the covering share changes.
    mutating func noteParentChange(of name: String, share: String?, oldParent: String?, newParent: String?, zone: Int64) throws {
        let before = try hierarchyShare(of: name, share: share, parent: oldParent, zone: zone)
        let after = try hierarchyShare(of: name, share: share, parent: newParent, zone: zone)
        guard before != after else { return }
        if let before { try markMove(of: name, leaving: before, zone: zone) }
        for (descendant, row) in try descendants(of: name, zone: zone) {
            try touch(row: row, name: descendant, zone: zone)
            if let before { try markMove(of: descendant, leaving: before, zone: zone) }
        }
    }

    /// The hierarchy share whose root the record's `parent` chain reaches, as stored: the
    /// first `share` met, the record's own first.
    private func hierarchyShare(of name: String, share: String?, parent: String?, zone: Int64) throws -> String? {
        if let share { return share }
        var current = parent
        var visited: Set<String> = [name]
        while let node = current, visited.insert(node).inserted {
            guard let header = try header(zone: zone, name: node) else { return nil }
            if let share = header.share { return share }
            current = header.parent
        }
        return nil
    }

    /// The stored record `name` without its fields; `nil` when absent.
    private func header(zone: Int64, name: String) throws -> StoredRecord? {
        guard let row = try writer.records.rowID(zone: zone, name: name, in: txn.readView) else { return nil }
        var resolver = names.resolver
        return try txn.withValue(forKey: bigEndianKey(row), in: writer.records.table) {
            try RecordCodec.decode($0, names: &resolver, desiredKeys: [])
        }
    }

    /// Every record whose `parent` chain reaches `root` (not `root` itself), with its row,
    /// leaving out the subtrees of other share roots. Reads every record header of the zone
    /// once, as no index leads from a record to its children.
    private func descendants(of root: String, zone: Int64) throws -> [(name: String, row: Int64)] {
        var children: [String: [(name: String, row: Int64, isRoot: Bool)]] = [:]
        var resolver = names.resolver
        try txn.scan(writer.records.names, range: .prefix(Layout.namePrefix(zone: zone))) { _, value in
            let row = try readBigEndianKey(value)
            let stored = try txn.withValue(forKey: bigEndianKey(row), in: writer.records.table) {
                try RecordCodec.decode($0, names: &resolver, desiredKeys: [])
            }
            if let stored, let parent = stored.parent {
                children[parent, default: []].append((stored.recordName, row, stored.share != nil))
            }
            return true
        }
        var found: [(name: String, row: Int64)] = []
        var visited: Set<String> = [root]
        var pending = [root]
        while let node = pending.popLast() {
            for child in children[node] ?? [] where !child.isRoot && visited.insert(child.name).inserted {
                found.append((child.name, child.row))
                pending.append(child.name)
            }
        }
        return found
    }

    /// Gives the record at `row` a new change tag and moves its change log entry to this
    /// request's position; its fields, dates and index entries stay as they are.
    private mutating func touch(row: Int64, name: String, zone: Int64) throws {
        var resolver = names.resolver
        guard
            var stored = try txn.withValue(
                forKey: bigEndianKey(row), in: writer.records.table, { try RecordCodec.decode($0, names: &resolver) }),
            stored.changeSequence != sequence
        else { return }
        try logSave(zone: zone, row: row, name: name, previousSequence: stored.changeSequence)
        stored.changeSequence = sequence
        try txn.put(RecordCodec.encode(stored, names: &names), forKey: bigEndianKey(row), in: writer.records.table)
    }

    /// Notes that the record `name` left the share `share` at this request's position.
    private func markMove(of name: String, leaving share: String, zone: Int64) throws {
        var value = KeyWriter(capacity: 16 + share.utf8.count)
        value.append(sequence)
        value.append(share)
        try txn.put(value.bytes, forKey: Layout.sharedMoveKey(zone: zone, name: name), in: writer.changes.changeTable)
    }

    /// The share the deleted record `name` last left, if it left one (its mark goes away):
    /// its deletion is reported to that share's participants, who saw it before it left.
    mutating func takeMoveMark(of name: String, zone: Int64) throws -> String? {
        let key = Layout.sharedMoveKey(zone: zone, name: name)
        guard let value = try txn.value(forKey: key, in: writer.changes.changeTable) else { return nil }
        try txn.delete(key, in: writer.changes.changeTable)
        return try SharedMove(value).share
    }
}

/// A record's mark of the share it last left (`Layout.sharedMoveKey`).
struct SharedMove: Equatable {
    /// The position (commit sequence) at which it left.
    let sequence: Int64
    /// The share record's name.
    let share: String

    init(_ bytes: some Collection<UInt8>) throws {
        var reader = KeyReader(Array(bytes))
        sequence = try reader.readInt64()
        share = try reader.readString()
    }
}
