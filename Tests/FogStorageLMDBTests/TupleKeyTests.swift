import FogStorage
import FogStorageLMDB
import Foundation
import Testing

// MARK: - Tests

@Suite struct TupleKeyTests {
    // MARK: Layout

    @Test func knownEncodings() {
        let cases: [(TupleElement, [UInt8])] = [
            (.null, [0x00]),
            (.bytes([]), [0x01, 0x00]),
            (.bytes([0x66, 0x00, 0x62, 0xFF]), [0x01, 0x66, 0x00, 0xFF, 0x62, 0xFF, 0x00]),
            (.string(""), [0x02, 0x00]),
            (.string("hello"), [0x02, 0x68, 0x65, 0x6C, 0x6C, 0x6F, 0x00]),
            (.string("é\0"), [0x02, 0xC3, 0xA9, 0x00, 0xFF, 0x00]),
            (.int(0), [0x14]),
            (.int(1), [0x15, 0x01]),
            (.int(-1), [0x13, 0xFE]),
            (.int(255), [0x15, 0xFF]),
            (.int(-255), [0x13, 0x00]),
            (.int(256), [0x16, 0x01, 0x00]),
            (.int(-256), [0x12, 0xFE, 0xFF]),
            (.int(65535), [0x16, 0xFF, 0xFF]),
            (.int(65536), [0x17, 0x01, 0x00, 0x00]),
            (.int(4_294_967_296), [0x19, 0x01, 0x00, 0x00, 0x00, 0x00]),
            (.int(.max), [0x1C, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            (.int(.min), [0x0C, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            (.int(.min + 1), [0x0C, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
            (.double(0.0), [0x21, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
            (.double(-0.0), [0x21, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            (.double(1.0), [0x21, 0xBF, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
            (.double(-1.0), [0x21, 0x40, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            (.date(Date(timeIntervalSinceReferenceDate: 0)), [0x22, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
            (.date(Date(timeIntervalSinceReferenceDate: 1)), [0x22, 0xBF, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
            (.bool(false), [0x26]),
            (.bool(true), [0x27]),
            (.tuple([]), [0x05, 0x00]),
            (.tuple([.null, .int(1)]), [0x05, 0x00, 0xFF, 0x15, 0x01, 0x00]),
            (.tuple([.string("a"), .null]), [0x05, 0x02, 0x61, 0x00, 0x00, 0xFF, 0x00]),
            (.tuple([.tuple([.null])]), [0x05, 0x05, 0x00, 0xFF, 0x00, 0x00]),
        ]
        for (element, expected) in cases {
            let encoded = Tuple([element]).encoded
            #expect(encoded == expected, "\(element): \(hexString(encoded)) != \(hexString(expected))")
            #expect((try? Tuple(decoding: expected)) == Tuple([element]), "decoding \(hexString(expected))")
        }
        // A top-level null is a single byte, even before other elements.
        #expect(Tuple([.string("a"), .null, .int(0)]).encoded == [0x02, 0x61, 0x00, 0x00, 0x14])
    }

    @Test func writerConveniencesMatchTypedAppends() {
        var a = KeyWriter()
        a.append(42 as Int)
        a.append(-7 as Int)
        var b = KeyWriter(capacity: 0)
        b.append(Int64(42))
        b.append(Int64(-7))
        #expect(a.bytes == b.bytes)

        // Contiguous, Data and non-contiguous byte collections encode alike.
        let payload: [UInt8] = [0, 1, 0, 0xFF, 0]
        var c = KeyWriter()
        c.append(bytes: payload)
        c.append(bytes: Data(payload))
        c.append(bytes: payload.reversed().reversed())
        c.append(bytes: payload.lazy.map { $0 })
        let single = Tuple([.bytes(payload)]).encoded
        #expect(c.bytes == single + single + single + single)

        c.removeAll()
        #expect(c.bytes.isEmpty)
        c.appendNull()
        #expect(c.bytes == [0x00])
    }

    // MARK: Round trips

    @Test func boundaryValuesRoundTrip() throws {
        var elements: [TupleElement] = Self.boundaryInts.map { .int($0) } + Self.boundaryDoubles.map { .double($0) }
        elements += Self.boundaryDoubles.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        elements += [.null, .bool(false), .bool(true), .string(""), .bytes([]), .tuple([]), .tuple([.null])]
        elements += [.string("\0"), .string("\0\0"), .bytes([0]), .bytes([0xFF, 0]), .string("😀e\u{301}中\u{10FFFF}")]
        for element in elements {
            let tuple = Tuple([element])
            let decoded = try Tuple(decoding: tuple.encoded)
            #expect(decoded == tuple, "\(element)")
            var reader = KeyReader(tuple.encoded)
            #expect(try readTyped(like: element, from: &reader) == element)
            #expect(reader.isAtEnd)
        }
        // All of them in one key, and nested.
        let all = Tuple(elements + [.tuple(elements)])
        #expect(try Tuple(decoding: all.encoded) == all)
    }

    @Test func randomTuplesRoundTrip() throws {
        var rng = SplitMix64(seed: 0x5EED_0001)
        var failures = Failures()
        for _ in 0..<5_000 {
            let tuple = rng.tuple(maxCount: 6)
            let encoded = tuple.encoded
            do {
                let decoded = try Tuple(decoding: encoded)
                if decoded != tuple || decoded.encoded != encoded {
                    failures.record("round trip of \(tuple) gave \(decoded)")
                }
                let viaBuffer = try encoded.withUnsafeBytes { buffer in try Tuple(decoding: buffer) }
                if viaBuffer != tuple { failures.record("buffer round trip of \(tuple) gave \(viaBuffer)") }
            } catch {
                failures.record("decoding \(tuple) threw \(error)")
            }
        }
        failures.finish()
    }

    @Test func typedFastPathMatchesGenericTuple() throws {
        var rng = SplitMix64(seed: 0x5EED_0002)
        var failures = Failures()
        for _ in 0..<2_000 {
            let tuple = rng.tuple()
            var writer = KeyWriter()
            for element in tuple.elements { appendTyped(element, to: &writer) }
            let encoded = tuple.encoded
            if writer.bytes != encoded {
                failures.record("typed writer gave \(hexString(writer.bytes)), Tuple gave \(hexString(encoded)) for \(tuple)")
                continue
            }

            // Typed reads, over an array and over a raw buffer.
            var reader = KeyReader(encoded)
            let typed = try tuple.elements.map { element throws(KeyDecodingError) in try readTyped(like: element, from: &reader) }
            if typed != tuple.elements || !reader.isAtEnd { failures.record("typed reads of \(tuple) gave \(typed)") }

            try encoded.withUnsafeBytes { buffer in
                var reader = KeyReader(buffer)
                var skipper = KeyReader(buffer)
                for element in tuple.elements {
                    let read = try reader.readElement()
                    try skipper.skipElement()
                    if read != element || reader.offset != skipper.offset {
                        failures.record("buffer reader: \(read) vs \(element), offsets \(reader.offset)/\(skipper.offset)")
                    }
                }
                if !reader.isAtEnd || !skipper.isAtEnd { failures.record("buffer reader did not reach the end") }
            }
        }
        failures.finish()
    }

    @Test func equalityIsEncodingIdentity() {
        let precomposed = TupleElement.string("\u{E9}")
        let decomposed = TupleElement.string("e\u{301}")
        #expect("\u{E9}" == "e\u{301}")  // Swift String equality...
        #expect(precomposed != decomposed)  // ...but different keys.
        #expect(TupleElement.double(0.0) != .double(-0.0))
        #expect(TupleElement.date(Date(timeIntervalSinceReferenceDate: 0)) != .date(Date(timeIntervalSinceReferenceDate: -0.0)))
        #expect(TupleElement.double(.nan) == .double(.nan))
        #expect(Set([TupleElement.double(.nan), .double(.nan), .double(0), .double(-0.0), precomposed, decomposed]).count == 5)

        var rng = SplitMix64(seed: 0x5EED_0003)
        for _ in 0..<2_000 {
            let a = rng.tuple(maxCount: 2)
            let b = Tuple(rng.neighbor(of: a.elements, depth: 2))
            #expect((a == b) == (a.encoded == b.encoded))
            if a == b { #expect(a.hashValue == b.hashValue) }
        }
    }

    @Test func nanRoundTripsByBitPatternAndSortsOutsideInfinity() throws {
        let patterns: [UInt64] = [
            0x7FF8_0000_0000_0000, 0x7FF0_0000_0000_0001, 0x7FFF_FFFF_FFFF_FFFF, 0x7FF4_0000_DEAD_BEEF,
            0xFFF8_0000_0000_0000, 0xFFF0_0000_0000_0001, 0xFFFF_FFFF_FFFF_FFFF,
        ]
        for pattern in patterns {
            let nan = Double(bitPattern: pattern)
            var writer = KeyWriter()
            writer.append(nan)
            writer.append(Date(timeIntervalSinceReferenceDate: nan))
            var reader = KeyReader(writer.bytes)
            let double = try reader.readDouble()
            let date = try reader.readDate()
            #expect(double.bitPattern == pattern)
            #expect(date.timeIntervalSinceReferenceDate.bitPattern == pattern)

            let key = Tuple([.double(nan)]).encoded
            if pattern >> 63 == 0 {
                #expect(byteOrder(Tuple([.double(.infinity)]).encoded, key) < 0)
            } else {
                #expect(byteOrder(key, Tuple([.double(-.infinity)]).encoded) < 0)
            }
        }
    }

    // MARK: Order

    @Test func boundaryValuesSortNumerically() {
        let ints = Self.boundaryInts.sorted()
        let doubles = Self.boundaryDoubles.sorted { compareDoubles($0, $1) < 0 }
        for (a, b) in zip(ints, ints.dropFirst()) where a != b {
            #expect(byteOrder(Tuple([.int(a)]).encoded, Tuple([.int(b)]).encoded) < 0, "\(a) < \(b)")
        }
        for (a, b) in zip(doubles, doubles.dropFirst()) where compareDoubles(a, b) != 0 {
            #expect(byteOrder(Tuple([.double(a)]).encoded, Tuple([.double(b)]).encoded) < 0, "\(a) < \(b)")
            let (da, db) = (Date(timeIntervalSinceReferenceDate: a), Date(timeIntervalSinceReferenceDate: b))
            #expect(byteOrder(Tuple([.date(da)]).encoded, Tuple([.date(db)]).encoded) < 0, "\(da) < \(db)")
        }
        #expect(byteOrder(Tuple([.double(-0.0)]).encoded, Tuple([.double(0.0)]).encoded) < 0)
    }

    @Test func randomPairsSortInTupleOrder() {
        var rng = SplitMix64(seed: 0x5EED_0004)
        var failures = Failures()
        var outcomes = [0, 0, 0]
        for round in 0..<20_000 {
            let a = rng.tuple()
            let b = round % 4 == 0 ? rng.tuple() : Tuple(rng.neighbor(of: a.elements, depth: 2))
            let expected = tupleOrder(a, b)
            let actual = byteOrder(a.encoded, b.encoded)
            outcomes[expected + 1] += 1
            if expected != actual {
                failures.record(
                    "tuple order \(expected), byte order \(actual):\n  \(a) = \(hexString(a.encoded))\n  \(b) = \(hexString(b.encoded))")
            }
        }
        failures.finish()
        // The generator must exercise all three outcomes, equal ones included.
        #expect(outcomes.allSatisfy { $0 > 500 }, "outcomes <, =, >: \(outcomes)")
    }

    @Test func sortedKeysDecodeInTupleOrder() throws {
        var rng = SplitMix64(seed: 0x5EED_0005)
        let keys = (0..<3_000).map { _ in rng.tuple(maxCount: 3).encoded }.sorted { byteOrder($0, $1) < 0 }
        let tuples = try keys.map { key throws(KeyDecodingError) in try Tuple(decoding: key) }
        for (a, b) in zip(tuples, tuples.dropFirst()) {
            #expect(tupleOrder(a, b) <= 0, "\(a) before \(b)")
        }
    }

    // MARK: Prefixes

    @Test func encodedPrefixTupleIsBytePrefix() {
        var rng = SplitMix64(seed: 0x5EED_0006)
        for _ in 0..<3_000 {
            let tuple = rng.tuple(maxCount: 6)
            let full = tuple.encoded
            var writer = KeyWriter()
            for (count, element) in tuple.elements.enumerated() {
                let prefix = Tuple(Array(tuple.elements.prefix(count))).encoded
                #expect(full.starts(with: prefix))
                #expect(writer.bytes == prefix)
                writer.append(element)
            }
            #expect(writer.bytes == full)
        }
    }

    @Test func successorBoundsEveryKeyWithThePrefix() {
        #expect(KeyRange.successor(ofPrefix: []) == nil)
        #expect(KeyRange.successor(ofPrefix: [0xFF, 0xFF]) == nil)
        #expect(KeyRange.successor(ofPrefix: [0x01, 0xFF, 0xFF]) == [0x02])
        #expect(KeyRange.successor(ofPrefix: [0x02, 0x61, 0x00]) == [0x02, 0x61, 0x01])

        var rng = SplitMix64(seed: 0x5EED_0007)
        for _ in 0..<2_000 {
            // Byte prefixes, often ending in 0xFF runs.
            var prefix = rng.bytes()
            if rng.chance(40) { prefix += Array(repeating: 0xFF, count: Int.random(in: 1...3, using: &rng)) }
            guard let successor = KeyRange.successor(ofPrefix: prefix) else {
                #expect(prefix.allSatisfy { $0 == 0xFF })
                continue
            }
            // Exactly: strip trailing 0xFF, increment the last byte.
            let kept = successor.count - 1
            #expect(successor.count <= prefix.count)
            #expect(Array(successor.prefix(kept)) == Array(prefix.prefix(kept)))
            #expect(successor[kept] == prefix[kept] + 1)
            #expect(prefix[(kept + 1)...].allSatisfy { $0 == 0xFF })
            #expect(byteOrder(prefix, successor) < 0)
            for _ in 0..<20 {
                var suffix = rng.bytes()
                if rng.chance(30) { suffix = Array(repeating: 0xFF, count: Int.random(in: 1...12, using: &rng)) }
                #expect(byteOrder(prefix + suffix, successor) < 0)
            }

            // Tuple prefixes: every longer tuple's key is below the successor.
            let tuple = rng.tuple(maxCount: 3)
            let tupleKey = tuple.encoded
            if let bound = KeyRange.successor(ofPrefix: tupleKey) {
                let longer = Tuple(tuple.elements + rng.elements(depth: 2, maxCount: 3))
                #expect(byteOrder(longer.encoded, bound) < 0)
                #expect(!bound.starts(with: tupleKey))
            }
        }
    }

    // MARK: Nested reading

    @Test func nestedReaderReadsSkipsAndStops() throws {
        var writer = KeyWriter()
        writer.append("a")
        writer.appendNested { nested in
            nested.appendNull()
            nested.append(Int64(5))
            nested.appendNested { $0.append(true) }
            nested.append("unread")
        }
        writer.append(Int64(7))
        #expect(
            writer.bytes == [
                0x02, 0x61, 0x00,
                0x05, 0x00, 0xFF, 0x15, 0x05, 0x05, 0x27, 0x00, 0x02, 0x75, 0x6E, 0x72, 0x65, 0x61, 0x64, 0x00, 0x00,
                0x15, 0x07,
            ])
        #expect(
            try Tuple(decoding: writer.bytes) == [
                .string("a"), .tuple([.null, .int(5), .tuple([.bool(true)]), .string("unread")]), .int(7),
            ])

        var reader = KeyReader(writer.bytes)
        let nullBeforeA = reader.readNullIfPresent()
        #expect(!nullBeforeA)
        let a = try reader.readString()
        #expect(a == "a")
        var innerFailure: KeyDecodingError?
        let five = try reader.readNested { (nested: inout KeyReader) throws(KeyDecodingError) -> Int64 in
            #expect(!nested.isAtEnd)
            let first = nested.readNullIfPresent()
            let second = nested.readNullIfPresent()
            #expect(first && !second)
            let value = try nested.readInt64()
            try nested.readNested { (inner: inout KeyReader) throws(KeyDecodingError) in
                let flag = try inner.readBool()
                #expect(flag && inner.isAtEnd)
                do throws(KeyDecodingError) {
                    _ = try inner.readElement()
                } catch {
                    innerFailure = error
                }
            }
            return value  // "unread" is skipped
        }
        #expect(innerFailure == KeyDecodingError(.endOfTuple, at: 10))
        #expect(five == 5)
        let seven = try reader.readInt64()
        #expect(seven == 7)
        #expect(reader.isAtEnd)
        #expect(throws: KeyDecodingError(.endOfTuple, at: 22)) { try reader.readInt64() }

        // A failing body leaves the outer reader where it was.
        var again = KeyReader(writer.bytes)
        try again.skipElement()
        #expect(throws: KeyDecodingError(.typeMismatch(expected: .string, foundTag: 0x00), at: 4)) {
            try again.readNested { (nested: inout KeyReader) throws(KeyDecodingError) in _ = try nested.readString() }
        }
        #expect(again.offset == 3)
        try again.skipElement()
        let last = try again.readInt64()
        #expect(last == 7)
    }

    // MARK: Garbage

    @Test func specificGarbageReportsReasonAndOffset() throws {
        func failure(_ bytes: [UInt8]) -> KeyDecodingError? {
            do {
                _ = try Tuple(decoding: bytes)
                return nil
            } catch {
                return error
            }
        }
        let nine = [UInt8](repeating: 0xFF, count: 7)
        let cases: [([UInt8], KeyDecodingError.Reason, Int)] = [
            ([0x03], .unknownTag(0x03), 0),
            ([0x14, 0xFF], .unknownTag(0xFF), 1),
            ([0x00, 0xFF], .unknownTag(0xFF), 1),  // 0x00 0xFF is a null only inside a nested tuple
            ([0x02, 0x61], .truncated, 0),
            ([0x02, 0x61, 0x00, 0xFF], .truncated, 0),
            ([0x14, 0x01, 0x00, 0xFF], .truncated, 1),
            ([0x02, 0xC3, 0x00], .invalidUTF8, 0),
            ([0x14, 0x02, 0xFF, 0x00], .invalidUTF8, 1),
            ([0x02, 0xED, 0xA0, 0x80, 0x00], .invalidUTF8, 0),  // UTF-16 surrogate
            ([0x02, 0xC0, 0x80, 0x00], .invalidUTF8, 0),  // overlong NUL
            ([0x15, 0x00], .nonCanonicalInteger, 0),
            ([0x13, 0xFF], .nonCanonicalInteger, 0),
            ([0x16, 0x00, 0x01], .nonCanonicalInteger, 0),
            ([0x16, 0x01], .truncated, 0),
            ([0x1C, 0x80] + [UInt8](repeating: 0, count: 7), .integerOverflow, 0),
            ([0x0C, 0x7F] + nine.dropLast() + [0xFE], .integerOverflow, 0),
            ([0x21, 0x01, 0x02, 0x03], .truncated, 0),
            ([0x22], .truncated, 0),
            ([0x05, 0x14], .truncated, 2),
            ([0x05, 0x05, 0x00], .truncated, 3),
            ([0x05, 0x00, 0xFF], .truncated, 3),
            ([0x05, 0x13], .truncated, 1),
        ]
        for (bytes, reason, offset) in cases {
            #expect(failure(bytes) == KeyDecodingError(reason, at: offset), "\(hexString(bytes))")
        }
        #expect(failure([0x0C, 0x7F] + nine) == nil)  // Int64.min itself is fine

        // Nesting: maxNestingDepth levels decode, one more does not.
        let depth = KeyReader.maxNestingDepth
        let deepest = [UInt8](repeating: 0x05, count: depth) + [UInt8](repeating: 0x00, count: depth)
        #expect(failure(deepest) == nil)
        let tooDeep = [UInt8](repeating: 0x05, count: depth + 1) + [UInt8](repeating: 0x00, count: depth + 1)
        #expect(failure(tooDeep) == KeyDecodingError(.nestingTooDeep, at: depth))
        var skipper = KeyReader(tooDeep)
        #expect(throws: KeyDecodingError(.nestingTooDeep, at: depth)) { try skipper.skipElement() }
        let endless = [UInt8](repeating: 0x05, count: 100_000)
        #expect(failure(endless) == KeyDecodingError(.nestingTooDeep, at: depth))

        // Typed reads report the type they wanted and leave the offset alone.
        var reader = KeyReader([0x14, 0x03])
        #expect(throws: KeyDecodingError(.typeMismatch(expected: .string, foundTag: 0x14), at: 0)) { try reader.readString() }
        #expect(throws: KeyDecodingError(.typeMismatch(expected: .null, foundTag: 0x14), at: 0)) { try reader.readNull() }
        #expect(reader.offset == 0)
        let zero = try reader.readInt64()
        #expect(zero == 0)
        #expect(throws: KeyDecodingError(.unknownTag(0x03), at: 1)) { try reader.readBool() }
        #expect(throws: KeyDecodingError(.unknownTag(0x03), at: 1)) { try reader.skipElement() }

        let description = KeyDecodingError(.unknownTag(0x03), at: 17).description
        #expect(description.contains("offset 17") && description.contains("0x03"), "\(description)")
    }

    @Test func randomGarbageThrowsOrDecodesCanonically() {
        var rng = SplitMix64(seed: 0x5EED_0008)
        let likelyBytes: [UInt8] = [0x00, 0x01, 0x02, 0x05, 0x0C, 0x13, 0x14, 0x15, 0x16, 0x1C, 0x21, 0x22, 0x26, 0x27, 0xFF, 0x61, 0xC3]
        var failures = Failures()
        var decodedCount = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...24, using: &rng)).map { _ in
                    rng.chance(60) ? rng.pick(likelyBytes) : UInt8.random(in: 0...255, using: &rng)
                }
            } else {
                // Mutate a valid key: change, insert or delete a few bytes.
                bytes = rng.tuple().encoded
                for _ in 0...Int.random(in: 0...2, using: &rng) {
                    let index = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0 where !bytes.isEmpty: bytes[index] = rng.pick(likelyBytes)
                    case 1: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: index)
                    default: if !bytes.isEmpty { bytes.remove(at: index) }
                    }
                }
            }

            do throws(KeyDecodingError) {
                let tuple = try Tuple(decoding: bytes)
                decodedCount += 1
                if tuple.encoded != bytes { failures.record("\(hexString(bytes)) decoded to \(tuple), which encodes differently") }
                // skipElement walks the same elements.
                var skipper = KeyReader(bytes)
                do throws(KeyDecodingError) {
                    for _ in tuple.elements { try skipper.skipElement() }
                    if !skipper.isAtEnd { failures.record("skip did not reach the end of \(hexString(bytes))") }
                } catch {
                    failures.record("skip threw \(error) on decodable \(hexString(bytes))")
                }
            } catch {
                if !(0...bytes.count).contains(error.offset) {
                    failures.record("offset \(error.offset) outside \(hexString(bytes))")
                }
            }

            // Typed reads in random order, over a raw buffer: must throw or succeed, never trap.
            bytes.withUnsafeBytes { buffer in
                var reader = KeyReader(buffer)
                for _ in 0..<6 {
                    do throws(KeyDecodingError) {
                        switch Int.random(in: 0..<9, using: &rng) {
                        case 0: _ = try reader.readString()
                        case 1: _ = try reader.readBytes()
                        case 2: _ = try reader.readInt64()
                        case 3: _ = try reader.readDouble()
                        case 4: _ = try reader.readDate()
                        case 5: _ = try reader.readBool()
                        case 6: try reader.skipElement()
                        case 7: _ = reader.readNullIfPresent()
                        default:
                            try reader.readNested { (nested: inout KeyReader) throws(KeyDecodingError) in _ = try nested.readElement() }
                        }
                    } catch {
                        if !(0...bytes.count).contains(error.offset) {
                            failures.record("offset \(error.offset) outside \(hexString(bytes))")
                        }
                    }
                }
            }
        }
        failures.finish()
        #expect(decodedCount > 1_000, "only \(decodedCount) garbage keys decoded; the fuzzer is too weak")
    }

    @Test func truncatedKeysThrowUnlessCutAtAnElementBoundary() {
        var rng = SplitMix64(seed: 0x5EED_0009)
        var failures = Failures()
        for _ in 0..<1_500 {
            let tuple = rng.tuple(maxCount: 4)
            let encoded = tuple.encoded
            // Element boundaries: the lengths of the encodings of each prefix tuple.
            var boundaries: [Int] = [0]
            var writer = KeyWriter()
            for element in tuple.elements {
                writer.append(element)
                boundaries.append(writer.bytes.count)
            }
            for length in 0..<encoded.count {
                let cut = Array(encoded.prefix(length))
                let decoded = try? Tuple(decoding: cut)
                if let index = boundaries.firstIndex(of: length) {
                    if decoded != Tuple(Array(tuple.elements.prefix(index))) {
                        failures.record("cut at boundary \(length) of \(tuple) decoded to \(String(describing: decoded))")
                    }
                    continue
                }
                // The element the cut falls in. A cut just after an inner 0x00 of a
                // top-level string, bytes or nested tuple can leave a valid shorter key
                // (e.g. "a\0" cut to "a"); anything else must throw.
                let index = boundaries.lastIndex { $0 < length }!
                let elementBytes = encoded[boundaries[index]..<boundaries[index + 1]]
                let kind = tuple.elements[index].kind
                let mayDecode = [.bytes, .string, .tuple].contains(kind) && elementBytes.dropLast().contains(0x00)
                if let decoded {
                    if !mayDecode || decoded.encoded != cut {
                        failures.record("cut at \(length) of \(hexString(encoded)) decoded to \(decoded)")
                    }
                }
            }
        }
        failures.finish()
    }
}

// MARK: - Fixtures
//
// Nested in the suite so they cannot collide with the module's shared test support.

extension TupleKeyTests {
    // MARK: - Deterministic randomness

    // MARK: - Value generators

    /// Integers at and around every byte-length boundary of the encoding.
    static let boundaryInts: [Int64] = {
        var values: [Int64] = [0, 1, -1, 2, -2, .max, .min, .max - 1, .min + 1]
        for bits in stride(from: 8, through: 56, by: 8) {
            let edge = Int64(1) << Int64(bits)
            for value in [edge - 1, edge, edge + 1] {
                values += [value, -value]
            }
        }
        values += [127, 128, -127, -128, 255, 256, 65535, 65536, 4_294_967_295, 4_294_967_296]
        return values
    }()

    /// Doubles at the edges of the format: zeros, infinities, subnormals, extremes.
    static let boundaryDoubles: [Double] = {
        let positives: [Double] = [
            0, 1, 0.5, 2, .infinity, .leastNonzeroMagnitude, .leastNormalMagnitude,
            Double.leastNormalMagnitude.nextDown, .greatestFiniteMagnitude, .ulpOfOne,
            1.0.nextUp, 1.0.nextDown, .pi, 1e-300, 1e300, 123_456.789,
            Double(bitPattern: 0x000F_FFFF_FFFF_FFFF),  // largest subnormal
        ]
        return positives + positives.map { -$0 }
    }()

    /// A pool of Unicode scalars: ASCII, NUL, DEL, 2-, 3- and 4-byte UTF-8, a combining mark.
    static let scalarPool: [Unicode.Scalar] = [
        "a", "b", "z", "A", "\0", "\u{01}", "\u{7F}", "\u{80}", "\u{FF}", "é", "e", "\u{301}",
        "中", "\u{FFFD}", "\u{FFFF}", "\u{10000}", "😀", "\u{10FFFF}",
    ]

    // MARK: - Tuple order (test oracle, independent of the encoding)

    /// The rank of an element's type: its tag, which orders different types.
    func typeRank(_ element: TupleElement) -> Int {
        switch element {
        case .null: 0x00
        case .bytes: 0x01
        case .string: 0x02
        case .tuple: 0x05
        case .int: 0x14
        case .double: 0x21
        case .date: 0x22
        case .bool(let value): value ? 0x27 : 0x26
        }
    }

    func threeWay<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a > b ? 1 : 0) }

    /// Numeric order with -0 before +0 (NaN not supported).
    func compareDoubles(_ a: Double, _ b: Double) -> Int {
        let numeric = threeWay(a, b)
        if numeric != 0 || a != 0 { return numeric }
        return threeWay(a.sign == .minus ? 0 : 1, b.sign == .minus ? 0 : 1)
    }

    func compareSequences<S: Sequence>(_ a: S, _ b: S, by compare: (S.Element, S.Element) -> Int) -> Int {
        var left = a.makeIterator()
        var right = b.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case let (x?, y?):
                let c = compare(x, y)
                if c != 0 { return c }
            }
        }
    }

    /// Tuple order of two elements: by type tag, then by value.
    func tupleOrder(_ a: TupleElement, _ b: TupleElement) -> Int {
        let rank = threeWay(typeRank(a), typeRank(b))
        if rank != 0 { return rank }
        switch (a, b) {
        case let (.bytes(x), .bytes(y)): return compareSequences(x, y, by: threeWay)
        case let (.string(x), .string(y)): return compareSequences(Array(x.utf8), Array(y.utf8), by: threeWay)
        case let (.int(x), .int(y)): return threeWay(x, y)
        case let (.double(x), .double(y)): return compareDoubles(x, y)
        case let (.date(x), .date(y)):
            return compareDoubles(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        case let (.tuple(x), .tuple(y)): return compareSequences(x, y, by: tupleOrder)
        default: return 0  // null, or equal booleans
        }
    }

    /// Tuple order: lexicographic by element, a prefix first.
    func tupleOrder(_ a: Tuple, _ b: Tuple) -> Int {
        compareSequences(a.elements, b.elements, by: tupleOrder)
    }

    /// `memcmp` order of two keys, the shorter first on a tie.
    func byteOrder(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let common = min(a.count, b.count)
        let c = common == 0 ? 0 : a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in memcmp(pa.baseAddress!, pb.baseAddress!, common) } }
        return c != 0 ? (c < 0 ? -1 : 1) : threeWay(a.count, b.count)
    }

    func hexString(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02X", $0) }.joined(separator: " ")
    }

    // MARK: - Fast-path helpers

    /// Writes `element` with the typed `KeyWriter` methods (not `append(TupleElement)`).
    func appendTyped(_ element: TupleElement, to writer: inout KeyWriter) {
        switch element {
        case .null: writer.appendNull()
        case .bytes(let value): writer.append(bytes: value)
        case .string(let value): writer.append(value)
        case .int(let value): writer.append(value)
        case .double(let value): writer.append(value)
        case .date(let value): writer.append(value)
        case .bool(let value): writer.append(value)
        case .tuple(let elements):
            writer.appendNested { nested in
                for element in elements { appendTyped(element, to: &nested) }
            }
        }
    }

    /// Reads an element of `expected`'s type with the typed `KeyReader` methods.
    func readTyped(like expected: TupleElement, from reader: inout KeyReader) throws(KeyDecodingError) -> TupleElement {
        switch expected {
        case .null:
            try reader.readNull()
            return .null
        case .bytes: return .bytes(try reader.readBytes())
        case .string: return .string(try reader.readString())
        case .int: return .int(try reader.readInt64())
        case .double: return .double(try reader.readDouble())
        case .date: return .date(try reader.readDate())
        case .bool: return .bool(try reader.readBool())
        case .tuple(let elements):
            return try reader.readNested { (nested: inout KeyReader) throws(KeyDecodingError) -> TupleElement in
                var result: [TupleElement] = []
                for element in elements { result.append(try readTyped(like: element, from: &nested)) }
                #expect(nested.isAtEnd)
                return .tuple(result)
            }
        }
    }

    /// Fails the test with up to `limit` messages, then a count.
    struct Failures {
        var count = 0
        let limit = 5

        mutating func record(_ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
            count += 1
            if count <= limit { Issue.record(Comment(rawValue: message()), sourceLocation: sourceLocation) }
        }

        func finish(sourceLocation: SourceLocation = #_sourceLocation) {
            if count > limit { Issue.record("\(count) failures in total", sourceLocation: sourceLocation) }
        }
    }
}

extension SplitMix64 {
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }

    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &self)] }

    mutating func int64() -> Int64 {
        switch Int.random(in: 0..<10, using: &self) {
        case 0..<3: pick(TupleKeyTests.boundaryInts)
        case 3..<5: Int64.random(in: -300...300, using: &self)
        default: Int64(bitPattern: next()) >> Int64.random(in: 0..<64, using: &self)
        }
    }

    /// Any double except NaN.
    mutating func double() -> Double {
        switch Int.random(in: 0..<10, using: &self) {
        case 0..<3: return pick(TupleKeyTests.boundaryDoubles)
        case 3..<5:  // subnormal
            let value = Double(bitPattern: next() & 0x000F_FFFF_FFFF_FFFF)
            return chance(50) ? -value : value
        case 5..<7: return Double(Int.random(in: -8...8, using: &self)) / 4
        default:
            while true {
                let value = Double(bitPattern: next())
                if !value.isNaN { return value }
            }
        }
    }

    mutating func string() -> String {
        var string = ""
        for _ in 0..<Int.random(in: 0...6, using: &self) {
            string.unicodeScalars.append(pick(TupleKeyTests.scalarPool))
        }
        return string
    }

    mutating func bytes() -> [UInt8] {
        (0..<Int.random(in: 0...6, using: &self)).map { _ in
            chance(60) ? pick([0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]) : UInt8.random(in: 0...255, using: &self)
        }
    }

    mutating func date() -> Date {
        chance(30)
            ? pick([Date(timeIntervalSinceReferenceDate: 0), .distantPast, .distantFuture, Date(timeIntervalSince1970: 1_700_000_000.123)])
            : Date(timeIntervalSinceReferenceDate: double())
    }

    /// A random element of `kind`; nested tuples are at most `depth` levels deeper.
    mutating func element(of kind: TupleElement.Kind, depth: Int) -> TupleElement {
        switch kind {
        case .null: .null
        case .bytes: .bytes(bytes())
        case .string: .string(string())
        case .int: .int(int64())
        case .double: .double(double())
        case .date: .date(date())
        case .bool: .bool(chance(50))
        case .tuple: .tuple(elements(depth: depth - 1))
        }
    }

    mutating func kind(depth: Int) -> TupleElement.Kind {
        let kinds: [TupleElement.Kind] = depth > 0 ? TupleElement.Kind.allCases : TupleElement.Kind.allCases.filter { $0 != .tuple }
        return pick(kinds)
    }

    mutating func element(depth: Int) -> TupleElement {
        element(of: kind(depth: depth), depth: depth)
    }

    mutating func elements(depth: Int, maxCount: Int = 4) -> [TupleElement] {
        (0..<Int.random(in: 0...maxCount, using: &self)).map { _ in element(depth: depth) }
    }

    mutating func tuple(maxCount: Int = 5) -> Tuple {
        Tuple(elements(depth: 2, maxCount: maxCount))
    }

    /// A tuple close to `tuple`: same types, some values changed, maybe cut or extended.
    mutating func neighbor(of elements: [TupleElement], depth: Int) -> [TupleElement] {
        var result = elements.map { element -> TupleElement in
            guard chance(40) else { return element }
            if case .tuple(let inner) = element, chance(70) {
                return .tuple(neighbor(of: inner, depth: depth - 1))
            }
            return chance(90) ? self.element(of: element.kind, depth: depth) : .null
        }
        if chance(25), !result.isEmpty { result.removeLast(Int.random(in: 1...result.count, using: &self)) }
        if chance(25) { result += self.elements(depth: depth, maxCount: 2) }
        return result
    }
}
