import FogKit
import FogKitTesting
import Foundation
import Testing

@testable import FogServer

/// The limit on failed sign-ins: per account, per client address, cleared by a success, and
/// bounded in memory.
@Suite struct SignInThrottleTests {
    static func server(perAccount: Int, perClient: Int, window: TimeInterval) async throws -> ServerHarness {
        var configuration = FogServer.Configuration(port: 0)
        configuration.signInAttemptsPerAccount = perAccount
        configuration.signInAttemptsPerClient = perClient
        configuration.signInWindow = window
        let server = try await ServerHarness(configuration: configuration)
        let credentials = ServerCredentials(store: server.directory.url)
        try credentials.setPassword("alice's secret", user: "alice")
        try credentials.setPassword("bob's secret", user: "bob")
        return server
    }

    static func signIn(_ server: ServerHarness, _ user: String, _ password: String) async throws -> ServerHarness.Reply {
        try await server.post("\(server.base)/signin", ["user": user, "password": password])
    }

    /// Over HTTP, with a window far longer than the test (password checks are slow in debug
    /// builds on a loaded machine; a short window could pass between two attempts). The
    /// window's end is tested on the throttle itself, with given times, below.
    @Test func anAccountPastItsLimitIsRefusedAndOthersAreNot() async throws {
        let window: TimeInterval = 600
        let server = try await Self.server(perAccount: 2, perClient: 100, window: window)
        defer { Task { await server.stop() } }
        for _ in 0..<2 { #expect(try await Self.signIn(server, "alice", "guess").status == 401) }
        // The right password no longer helps: refused before it is checked, with retryAfter.
        let refused = try await Self.signIn(server, "alice", "alice's secret")
        #expect(refused.status == 429)
        #expect(refused.json["serverErrorCode"] as? String == "THROTTLED")
        let retryAfter = try #require(refused.json["retryAfter"] as? Double, "\(refused.text)")
        #expect(retryAfter > 0 && retryAfter <= window)
        #expect(refused.json["uuid"] is String && refused.json["reason"] is String)
        #expect(refused.json["ckWebAuthToken"] == nil)
        // Another account is not affected.
        #expect(try await Self.signIn(server, "bob", "bob's secret").status == 200)
    }

    /// Once its window has passed, a refused account may try again, and the count starts over.
    @Test func theWindowsEndLetsTheAccountTryAgain() {
        let throttle = SignInThrottle(accountLimit: 2, clientLimit: 100, window: 3, maximumKeys: 10)
        let start = Date()
        for i in 0..<2 { throttle.recordFailure(account: "alice", client: "10.0.0.1", now: start.addingTimeInterval(Double(i))) }
        let wait = throttle.retryAfter(account: "alice", client: "10.0.0.1", now: start.addingTimeInterval(2))
        #expect(wait.map { $0 > 0 && $0 <= 1.0001 } == true, "\(String(describing: wait))")
        #expect(throttle.retryAfter(account: "bob", client: "10.0.0.2", now: start.addingTimeInterval(2)) == nil)
        #expect(throttle.retryAfter(account: "alice", client: "10.0.0.1", now: start.addingTimeInterval(3.5)) == nil)
        throttle.recordFailure(account: "alice", client: "10.0.0.1", now: start.addingTimeInterval(4))
        #expect(throttle.retryAfter(account: "alice", client: "10.0.0.1", now: start.addingTimeInterval(4)) == nil)
    }

    @Test func aSuccessClearsTheAccountsCount() async throws {
        let server = try await Self.server(perAccount: 3, perClient: 100, window: 600)
        defer { Task { await server.stop() } }
        for _ in 0..<2 {
            for _ in 0..<2 { #expect(try await Self.signIn(server, "alice", "guess").status == 401) }
            // Four failures in the window, but never three since the last success.
            #expect(try await Self.signIn(server, "alice", "alice's secret").status == 200)
        }
        for _ in 0..<3 { #expect(try await Self.signIn(server, "alice", "guess").status == 401) }
        #expect(try await Self.signIn(server, "alice", "alice's secret").status == 429)
    }

    @Test func oneClientTryingManyAccountsIsRefused() async throws {
        let server = try await Self.server(perAccount: 100, perClient: 3, window: 600)
        defer { Task { await server.stop() } }
        for name in ["x1", "x2", "x3"] { #expect(try await Self.signIn(server, name, "guess").status == 401) }
        let refused = try await Self.signIn(server, "bob", "bob's secret")
        #expect(refused.status == 429, "\(refused.text)")
        #expect(refused.json["serverErrorCode"] as? String == "THROTTLED")
    }

    @Test func trackedKeysStayBoundedAndTheOldestIsForgotten() {
        let throttle = SignInThrottle(accountLimit: 1, clientLimit: 1000, window: 600, maximumKeys: 10)
        let start = Date()
        throttle.recordFailure(account: "first", client: nil, now: start)
        #expect(throttle.retryAfter(account: "first", client: nil, now: start) != nil)
        for i in 0..<100 {
            throttle.recordFailure(account: "user\(i)", client: nil, now: start.addingTimeInterval(Double(i + 1)))
            #expect(throttle.trackedKeys <= 10)
        }
        // The first account's failure was the oldest: evicted, so it may try again.
        #expect(throttle.retryAfter(account: "first", client: nil, now: start.addingTimeInterval(101)) == nil)
        #expect(throttle.retryAfter(account: "user99", client: nil, now: start.addingTimeInterval(101)) != nil)
        // A window that has passed lets the account try again.
        #expect(throttle.retryAfter(account: "user99", client: nil, now: start.addingTimeInterval(800)) == nil)
    }
}
