/// A fixed set of short strings, looked up by comparing a string with the members of its
/// length in UTF-8 bytes: for a handful of short words that is a comparison of two words of
/// memory each, where a `Set` would hash the string first. A string longer than every member
/// is not one.
///
/// Equal strings have equal lengths for the members this is used with (ASCII words, none
/// holding one of the three characters that have non-ASCII canonical equivalents: `K`, `;`,
/// `` ` ``), so the answer is `Set.contains`'s.
struct StringsByLength: Sendable {
    private let buckets: [[String]]

    init(_ members: some Sequence<String>) {
        var buckets: [[String]] = []
        for member in members {
            let length = member.utf8.count
            if length >= buckets.count { buckets += Array(repeating: [], count: length + 1 - buckets.count) }
            buckets[length].append(member)
        }
        self.buckets = buckets
    }

    /// Whether `string` is a member.
    @inline(__always)
    func contains(_ string: String) -> Bool {
        let length = string.utf8.count
        guard length < buckets.count else { return false }
        for member in buckets[length] where member == string { return true }
        return false
    }
}
