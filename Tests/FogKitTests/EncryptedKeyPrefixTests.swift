import Testing

@testable import FogKit

/// `Record.isEncryptedKey` answers most keys by their first byte: it must agree with `hasPrefix`.
@Suite struct EncryptedKeyPrefixTests {
    @Test(arguments: [
        "", "_", "title", "___encrypted", "___encrypted.", "___encrypted.note", "__encrypted.note", "_\u{301}__encrypted.x",
        "\u{FF3F}__encrypted.x", "é", "___encrypted.é",
    ])
    func agreesWithHasPrefix(key: String) {
        #expect(Record.isEncryptedKey(key) == key.hasPrefix(Record.encryptedKeyPrefix))
    }
}
