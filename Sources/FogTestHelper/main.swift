import Foundation

// A helper process for FogKit's fault tests (not a product): each subcommand plays a
// process that shares a store with the test and then dies.
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "hold-readers" where arguments.count == 3:
        try holdReaders(directory: arguments[1], count: arguments[2])
    case "grow-under-limit" where arguments.count == 2:
        try growUnderLimit(directory: arguments[1])
    case "asset-workload" where arguments.count == 3:
        try await assetWorkload(directory: arguments[1], sources: arguments[2])
    case "shared-store" where arguments.count == 4:
        try await sharedStoreWorkload(url: arguments[1], process: arguments[2], rounds: Int(arguments[3]) ?? 10)
    case "powerloss-workload":
        try await powerLossWorkload(Array(arguments.dropFirst()))
    default:
        FileHandle.standardError.write(
            Data(
                "usage: FogTestHelper hold-readers <directory> <count|all> | grow-under-limit <directory> | asset-workload <directory> <sources> | shared-store <postgres-url> <process> <rounds> | powerloss-workload ...\n"
                    .utf8)
        )
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("FogTestHelper: \(error)\n".utf8))
    exit(1)
}
