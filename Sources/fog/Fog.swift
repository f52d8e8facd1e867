import ArgumentParser

/// The `fog` command: FogKit's command-line tool.
@main
struct Fog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fog",
        abstract: "FogKit: CloudKit's record model as an embedded database.",
        discussion: "Stores live in a local folder or on PostgreSQL (--store DIR or a postgres:// URL). Start with `fog demo`.",
        version: "0.1.0",
        subcommands: [
            DemoCommand.self, QueryCommand.self, IndexCommand.self, SchemaCommand.self, RoleCommand.self, ChangesCommand.self,
            InfoCommand.self, CheckCommand.self, LoadCommand.self, ExportCommand.self, ImportCommand.self, BackupCommand.self,
            RestoreCommand.self, UserCommand.self, WatchCommand.self, InitCommand.self, ServeCommand.self, TokenCommand.self,
            KeyCommand.self, AdminCommand.self, StoreCommand.self,
        ]
    )
}
