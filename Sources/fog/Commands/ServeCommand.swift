import ArgumentParser
import FogKit
import FogServer
import Foundation

/// `fog serve`: CloudKit Web Services over HTTP for one store, with the web console.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a store over HTTP as CloudKit Web Services, with the web console.",
        discussion: """
            Example:
              fog init --store notes-store --container iCloud.com.example.notes
              TOKEN=$(fog token create --store notes-store)
              fog serve --store notes-store --port 8080 &
              curl -s -X POST "http://127.0.0.1:8080/database/1/iCloud.com.example.notes/development/public/records/query?ckAPIToken=$TOKEN" \\
                -d '{"query":{"recordType":"Note"}}'
            Paths are /database/1/{container}/{development|production}/{public|private|shared}/…; \
            the console is at /console.
            """)

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "The address to listen on.")
    var host: String = "127.0.0.1"

    @Option(name: .long, help: "The port to listen on (0 picks a free one).")
    var port: Int = 8080

    @Option(name: .long, help: "The URL clients reach the server at, when it is not http://HOST:PORT.")
    var publicURL: String?

    func run() async throws {
        let configuration = FogServer.Configuration(host: host, port: port, publicURL: publicURL)
        let server: FogServer
        do {
            server = try FogServer(store: store.location, configuration: configuration)
        } catch let error as ServerSetupError {
            throw ValidationError(error.description)
        }
        try await server.run { port in
            let line = "FogServer: container \(server.containerIdentifier) at http://\(host):\(port) (console: /console)\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
    }
}

/// `fog init`: creates a store for a container.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create an empty store for a container in a folder.",
        discussion: "Example: fog init --store notes-store --container iCloud.com.example.notes")

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "The container identifier, such as iCloud.com.example.notes.")
    var container: String

    func run() async throws {
        let location = try store.prepare()
        if let existing = try Container.storedIdentifier(in: location) {
            guard existing == container else {
                throw ValidationError("\(store.store) already holds the store of container \(existing)")
            }
            print("\(store.store) already holds container \(existing)")
            return
        }
        let admin = try Container.Administrator(identifier: container, store: location)
        admin.close()
        print("created container \(container) in \(store.store)")
    }
}
