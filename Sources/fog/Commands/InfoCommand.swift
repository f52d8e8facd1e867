import ArgumentParser
import FogKit
import Foundation

/// `fog info`: describes a store.
struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Describe a store: container, format, size, users, zones and records.")

    @OptionGroup var options: StoreOptions

    @OptionGroup var environment: EnvironmentOptions

    func run() async throws {
        let admin = try options.openAdministrator(configuration: environment.applied())
        defer { admin.close() }
        print(Self.render(try admin.storeInfo()), terminator: "")
    }

    static func render(_ info: StoreInfo) -> String {
        var out = ""
        out += "store       \(info.directory.isFileURL ? info.directory.path : redactedPassword(info.directory))\n"
        out += "container   \(info.containerIdentifier)\n"
        out += "format      version \(info.formatVersion), incarnation \(info.incarnation)\n"
        out += "size        \(info.fileSize) bytes on disk, \(info.reservedSize) bytes reserved\n"
        out += "commits     \(info.commitSequence)\n"
        out += "users       \(info.userCount)\n"
        out += "records     \(info.recordCount)\n"
        out += "zones       \(info.zones.count)\n"
        for zone in info.zones.sorted(by: {
            ($0.scope.rawValue, $0.ownerRecordName, $0.zoneName) < ($1.scope.rawValue, $1.ownerRecordName, $1.zoneName)
        }) {
            let owner = zone.scope == .public ? "" : " owner \(zone.ownerIdentity ?? "?") (\(zone.ownerRecordName))"
            out +=
                "  \(zone.scope) \(zone.zoneName)\(owner): \(zone.recordCount) record\(zone.recordCount == 1 ? "" : "s") \(zone.capabilities)\n"
        }
        return out
    }
}
