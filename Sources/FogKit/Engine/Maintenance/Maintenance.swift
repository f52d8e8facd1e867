import FogStorage
import Foundation

/// The store as a whole: integrity checks, format migration, backups and store information.
/// It reads every table and, when migrating, rewrites them; the tables are named here as the
/// services that own them name them.
final class Maintenance<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let recordStore: RecordStore<Store>
    let indexStore: IndexStore<Store>
    let catalog: SchemaCatalog<Store>
    let changeLog: ChangeLog<Store>
    let zoneDirectory: ZoneDirectory<Store>
    /// User identity → user record name (``UserDirectory``'s table).
    let users: Table

    init(
        core: EngineCore<Store>, records: RecordStore<Store>, indexes: IndexStore<Store>, catalog: SchemaCatalog<Store>,
        changes: ChangeLog<Store>, zones: ZoneDirectory<Store>
    ) {
        self.core = core
        recordStore = records
        indexStore = indexes
        self.catalog = catalog
        changeLog = changes
        zoneDirectory = zones
        users = core.store.table(named: Layout.users)
    }

    var store: Store { core.store }
    var directory: URL { core.directory }
    var meta: Table { core.meta }
    var schema: Table { core.schema }
    var records: Table { recordStore.table }
    var recordNames: Table { recordStore.names }
    var refs: Table { recordStore.refs }
    var zones: Table { zoneDirectory.zones }
    var zoneIDs: Table { zoneDirectory.zoneIDs }
    var indexTable: Table { indexStore.indexTable }
    var changeTable: Table { changeLog.changeTable }
    var databaseChangeTable: Table { changeLog.databaseChangeTable }
}
