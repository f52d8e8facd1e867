import FogKit
import FogKitTesting
import FogServer
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A client that sends half a request and stalls is cut off after the idle timeout, and
/// others are served meanwhile.
@Suite struct SlowClientTests {
    /// How long a read of the test's connection waits before it gives up: far beyond the
    /// server's idle timeout (1 s), so that a read that ends before it was ended by the server.
    static let readTimeout = 60

    /// A TCP connection to loopback `port`, as a file descriptor.
    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// Starts a server with a 1 s idle timeout, sends it half a request head and lets it stall,
    /// has another request served meanwhile (so the stalled connection was accepted), then runs
    /// `body` with the stalled connection.
    static func withStalledRequest(_ body: (Int32) async throws -> Void) async throws {
        var configuration = FogServer.Configuration()
        configuration.idleTimeout = 1
        let server = try await ServerHarness(configuration: configuration)
        defer { Task { await server.stop() } }
        let fd = try connect(port: server.port)
        defer { close(fd) }
        let partial = "POST /database/1/\(ServerHarness.container)/development/public/records/query HTTP/1.1\r\nHost: x\r\n"
        _ = partial.withCString { send(fd, $0, strlen($0), 0) }
        // Others are served while it stalls.
        let reply = try await server.post(server.url("public", "records/query"), ["query": ["recordType": "Note"]])
        #expect(reply.status == 200)
        try await body(fd)
    }

    @Test func aStalledRequestIsClosedAfterTheIdleTimeout() async throws {
        try await Self.withStalledRequest { fd in
            // The stalled connection is closed (read gives 0) well before the 60 s read
            // timeout. (The bound is loose for a full parallel run on two cores. It once stayed
            // open 10 to 30 s there: a child process another test started had inherited the
            // server's end of it, see the next test.) The blocking reads run on a thread of
            // their own: on the concurrency pool they would hold one of its threads from the
            // server they wait for.
            let waited = await Self.secondsUntilClosed(fd)
            #expect(waited < 30)
        }
    }

    /// A child process that a test starts while a connection is open does not keep the
    /// connection open: SwiftNIO accepts without close-on-exec, so a child spawned then got
    /// the server's end of it and held it, the FIN waiting for the child to exit, until
    /// FogKitTesting's spawns closed every descriptor above 2 in the child (`SpawnActions`).
    @Test func aChildProcessStartedDuringTheStallDoesNotKeepTheConnectionOpen() async throws {
        try await Self.withStalledRequest { fd in
            // A child that would hold an inherited descriptor for 30 s.
            let child = try ChildProcess("/bin/sleep", ["30"])
            let waited = await Self.secondsUntilClosed(fd)
            #expect(waited < 20, "the connection stayed open \(waited) s, as long as the child ran")
            // And `terminate()` ends it: it starts with the default action for SIGTERM,
            // whatever the spawning thread blocked.
            child.terminate()
            #expect(child.terminationReason == .uncaughtSignal)
            #expect(child.terminationStatus == SIGTERM)
        }
    }

    /// Reads `fd` until the peer closes it (or the read timeout ends it), on a thread of its
    /// own; returns the seconds that took.
    static func secondsUntilClosed(_ fd: Int32) async -> Double {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let start = Date()
                var buffer = [UInt8](repeating: 0, count: 512)
                while recv(fd, &buffer, buffer.count, 0) > 0 {}
                continuation.resume(returning: Date().timeIntervalSince(start))
            }
        }
    }
}
