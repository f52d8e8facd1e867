import ArgumentParser
import FogKit
import Foundation

/// `fog check`: verifies a store's internal consistency.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check that every index entry points at a record and every record has its index entries.")

    @OptionGroup var options: StoreOptions

    @OptionGroup var environment: EnvironmentOptions

    func run() async throws {
        let admin = try options.openAdministrator(configuration: environment.applied())
        defer { admin.close() }
        let report = try admin.checkIntegrity()
        print(report)
        if !report.isSound { throw ExitCode.failure }
    }
}
