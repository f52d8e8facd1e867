import ArgumentParser
import FogKit
import Foundation

/// `fog check`: verifies a store's internal consistency.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check that every index entry points at a record and every record has its index entries.")

    @OptionGroup var options: StoreOptions

    func run() async throws {
        let container = try options.openExisting()
        defer { container.close() }
        let report = try container.checkIntegrity()
        print(report)
        if !report.isSound { throw ExitCode.failure }
    }
}
