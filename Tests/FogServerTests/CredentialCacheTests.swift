import FogKit
import FogKitTesting
import Foundation
import Testing

@testable import FogServer

/// A server's copy of its credentials sees tokens minted while it runs.
@Suite struct CredentialCacheTests {
    /// File times come from a coarse clock: a token minted a few milliseconds after the cache
    /// last read the file can leave the file's modification time as it was. The cache reads a
    /// file again when it was read within two seconds of its last change. (The web console's
    /// browser test failed now and then so: its administrator token was "unknown".)
    @Test func aTokenMintedInTheSameClockTickAsTheLastReadIsFound() throws {
        let directory = try TemporaryDirectory("credential-cache")
        let credentials = ServerCredentials(store: directory.url)
        let vault = CredentialVault.folder(directory.url)
        let file = CredentialFile.url(in: directory.url).path
        let cache = try CredentialCache(vault: vault)
        // Whole seconds, which the file system keeps exactly.
        let tick = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let first = try credentials.createAPIToken()
        try FileManager.default.setAttributes([.modificationDate: tick], ofItemAtPath: file)
        #expect(cache.isAPIToken(first))
        let second = try credentials.createAdministratorToken()
        // The write in the same tick: the file's time as at the last read.
        try FileManager.default.setAttributes([.modificationDate: tick], ofItemAtPath: file)
        #expect(vault.stamp == tick)
        #expect(cache.isAdministratorToken(second))
        #expect(!cache.isAdministratorToken(String(repeating: "0", count: 64)))
    }

    /// Once the file has been read well after its last change, an unknown token does not
    /// read it again.
    @Test func aSettledFileIsNotReadAgainForAnUnknownToken() throws {
        let directory = try TemporaryDirectory("credential-cache-settled")
        let credentials = ServerCredentials(store: directory.url)
        let vault = CredentialVault.folder(directory.url)
        let file = CredentialFile.url(in: directory.url).path
        let token = try credentials.createAPIToken()
        let cache = try CredentialCache(vault: vault)
        // The last change long ago: the read that an unknown token makes is settled.
        let old = Date().addingTimeInterval(-60)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: file)
        #expect(!cache.isAPIToken(String(repeating: "0", count: 64)))
        #expect(cache.isAPIToken(token))
        // A token written behind the cache's back with the old time stays unknown: the cache
        // trusts a settled time (a real write changes it).
        let hidden = try credentials.createAPIToken()
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: file)
        #expect(!cache.isAPIToken(hidden))
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: file)
        #expect(cache.isAPIToken(hidden))
    }
}
