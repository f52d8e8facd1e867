import FogKit

/// The sample records tests build again and again: the "Item" and "Note" records of the
/// query and change-feed tests (the notes app of the seed article
/// `004_ff5dcd423c8ff013.txt` in `/work/shared/seeds`).
public enum SampleRecords {
    /// `count` records of type "Item" named `i0`, `i1`, … in `zone`, each with an integer
    /// field `n` holding its index.
    public static func items(_ count: Int = 5, in zone: RecordZone.ID = .default) -> [Record] {
        (0..<count).map { i in
            let record = Record(recordType: "Item", recordID: Record.ID(recordName: "i\(i)", zoneID: zone))
            record["n"] = i
            return record
        }
    }

    /// A record of type "Note" named `name` in `zone`, with an integer field `v` holding
    /// `value`.
    public static func note(_ name: String, in zone: RecordZone.ID = .default, value: Int) -> Record {
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: name, zoneID: zone))
        record["v"] = value
        return record
    }
}
