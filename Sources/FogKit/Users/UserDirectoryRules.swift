import Foundation

/// What the user directory accepts: user names, email addresses and names. Every
/// refusal is ``FogError/Code/invalidArguments`` naming the call, the argument and what
/// is wrong with it, and is thrown before anything is stored.
enum UserDirectoryRules {
    /// The longest email address (RFC 5321's path limit less its angle brackets).
    static let maximumEmailBytes = 254
    /// The longest local part (before the `@`).
    static let maximumLocalPartBytes = 64
    /// The longest domain label.
    static let maximumLabelBytes = 63
    /// The longest part of a name (given name, family name, …), in UTF-8 bytes.
    static let maximumNamePartBytes = 1024

    /// Throws unless `user` is a user name a container accepts (1 to 255 bytes).
    static func checkUserName(_ user: String, in call: String) throws(FogError) {
        if user.isEmpty || user.utf8.count > 255 {
            throw FogError(
                .invalidArguments, message: "\(call): the user name must be 1 to 255 bytes long, not \(user.utf8.count)")
        }
    }

    /// The key an email address is stored and looked up by (lowercased: addresses are
    /// told apart without regard to case), after checking that it is an address.
    ///
    /// The rules are those of a mailbox as people type it: one `@`; a local part of 1 to
    /// 64 bytes, without spaces, control characters, `()<>[]:;,\"`, a leading or trailing
    /// dot or two dots in a row; a domain of at least two dot-separated labels of 1 to 63
    /// bytes of letters, digits and hyphens (or non-ASCII letters), neither starting nor
    /// ending with a hyphen; 254 bytes in all. Quoted local parts and address literals are
    /// refused.
    static func emailKey(_ email: String, in call: String, argument: String = "emailAddress") throws(FogError) -> String {
        func refuse(_ why: String) -> FogError {
            FogError(.invalidArguments, message: "\(call): \(argument) \"\(email)\" is not an email address: \(why)")
        }
        if email.isEmpty { throw FogError(.invalidArguments, message: "\(call): \(argument) is empty") }
        if email.utf8.count > maximumEmailBytes { throw refuse("it is longer than \(maximumEmailBytes) bytes") }
        if let bad = email.unicodeScalars.first(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
            throw refuse(
                "it contains \(bad.properties.isWhitespace ? "a space" : "a control character") (U+\(String(bad.value, radix: 16, uppercase: true)))"
            )
        }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw refuse(parts.count == 1 ? "it has no @" : "it has more than one @") }
        let local = parts[0], domain = parts[1]
        if local.isEmpty { throw refuse("nothing before the @") }
        if local.utf8.count > maximumLocalPartBytes { throw refuse("the part before the @ is longer than \(maximumLocalPartBytes) bytes") }
        if let special = local.first(where: { "()<>[]:;,\\\"".contains($0) }) { throw refuse("the part before the @ contains \(special)") }
        if local.hasPrefix(".") || local.hasSuffix(".") || local.contains("..") {
            throw refuse("the part before the @ starts or ends with a dot, or has two in a row")
        }
        if domain.isEmpty { throw refuse("nothing after the @") }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { throw refuse("the domain \(domain) has no dot") }
        for label in labels {
            if label.isEmpty { throw refuse("the domain \(domain) has an empty label") }
            if label.utf8.count > maximumLabelBytes { throw refuse("the domain label \(label) is longer than \(maximumLabelBytes) bytes") }
            if label.hasPrefix("-") || label.hasSuffix("-") { throw refuse("the domain label \(label) starts or ends with a hyphen") }
            if let bad = label.unicodeScalars.first(where: {
                $0.isASCII && !($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
            }) {
                throw refuse("the domain label \(label) contains \(bad)")
            }
        }
        return email.lowercased()
    }

    /// Throws unless `name` has at least one part and every part it has holds a visible
    /// character and at most ``maximumNamePartBytes`` bytes.
    static func checkName(_ name: PersonNameComponents, in call: String, argument: String = "nameComponents") throws(FogError) {
        let parts: [(String, String?)] = [
            ("namePrefix", name.namePrefix), ("givenName", name.givenName), ("middleName", name.middleName),
            ("familyName", name.familyName), ("nameSuffix", name.nameSuffix), ("nickname", name.nickname),
        ]
        var any = false
        for (label, value) in parts {
            guard let value else { continue }
            if value.unicodeScalars.allSatisfy({ $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
                throw FogError(.invalidArguments, message: "\(call): \(argument).\(label) is empty; leave it nil instead")
            }
            if value.utf8.count > maximumNamePartBytes {
                throw FogError(.invalidArguments, message: "\(call): \(argument).\(label) is longer than \(maximumNamePartBytes) bytes")
            }
            any = true
        }
        if !any {
            throw FogError(.invalidArguments, message: "\(call): \(argument) has no part set; pass nil for no name")
        }
    }
}
