import Foundation

/// Reads a multipart/form-data body (RFC 7578) just far enough to find an uploaded file.
enum MultipartBody {
    /// The boundary of a `multipart/form-data; boundary=…` content type, or `nil` for
    /// another content type.
    static func boundary(contentType: String?) -> String? {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            var value = String(pair[1])
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// The byte range of the content of the part named `files`, else of the first part
    /// with a `filename`; `nil` when there is none.
    static func filePart(in data: Data, boundary: String) -> Range<Data.Index>? {
        let delimiter = Data(("--" + boundary).utf8)
        let next = Data(("\r\n--" + boundary).utf8)
        let headerEnd = Data("\r\n\r\n".utf8)
        guard var cursor = data.range(of: delimiter)?.upperBound else { return nil }
        var firstFile: Range<Data.Index>?
        while cursor + 2 <= data.endIndex, data[cursor..<cursor + 2] != Data("--".utf8) {
            guard let headers = data.range(of: headerEnd, in: cursor..<data.endIndex) else { return firstFile }
            let text = String(decoding: data[cursor..<headers.lowerBound], as: UTF8.self).lowercased()
            guard let end = data.range(of: next, in: headers.upperBound..<data.endIndex) else { return firstFile }
            let content = headers.upperBound..<end.lowerBound
            if text.contains("name=\"files\"") || text.contains("name=files") { return content }
            if firstFile == nil, text.contains("filename=") { firstFile = content }
            cursor = end.upperBound
        }
        return firstFile
    }
}
