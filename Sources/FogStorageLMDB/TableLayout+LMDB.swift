internal import CLMDB
import FogStorage

extension TableLayout {
    /// The `mdb_dbi_open` flags of the layout: a multi-value table is an LMDB table with
    /// sorted duplicates (`MDB_DUPSORT`), packed when its values have a fixed size
    /// (`MDB_DUPFIXED`). LMDB keeps the flags a table was created with.
    var lmdbFlags: UInt32 {
        switch self {
        case .singleValue: 0
        case .multiValue(let fixed): UInt32(MDB_DUPSORT) | (fixed ? UInt32(MDB_DUPFIXED) : 0)
        }
    }

    /// The layout of an open table, from its flags (`mdb_dbi_flags`).
    init(lmdbFlags flags: UInt32) {
        if flags & UInt32(MDB_DUPSORT) == 0 {
            self = .singleValue
        } else {
            self = .multiValue(fixedSizeValues: flags & UInt32(MDB_DUPFIXED) != 0)
        }
    }
}
