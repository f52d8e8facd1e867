import Foundation

/// What an integrity check of a store found.
public struct IntegrityReport: Sendable, CustomStringConvertible {
    /// Records checked.
    public var recordCount = 0
    /// Zones checked.
    public var zoneCount = 0
    /// Index entries (record names, references, schema entries) checked.
    public var indexEntryCount = 0
    /// Every inconsistency found, one sentence each; empty when the store is sound.
    public var problems: [String] = []

    /// Whether no problem was found.
    public var isSound: Bool { problems.isEmpty }

    /// A one-line summary followed by the problems.
    public var description: String {
        var text = "\(recordCount) records, \(zoneCount) zones, \(indexEntryCount) index entries: "
        text += isSound ? "sound" : "\(problems.count) problem\(problems.count == 1 ? "" : "s")"
        for problem in problems.prefix(50) { text += "\n  - \(problem)" }
        if problems.count > 50 { text += "\n  - … \(problems.count - 50) more" }
        return text
    }
}
