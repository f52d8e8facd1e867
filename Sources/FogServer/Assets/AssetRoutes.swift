import FogKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The upload and download URLs the asset endpoints hand out. Neither takes credentials:
/// the signed token in the URL is the permission (server-to-server signature headers a
/// client adds to an upload are ignored).
enum AssetRoutes {
    static func respond(to request: inout Request, path: String, state: ServerState) async throws -> Response? {
        if path.hasPrefix(AssetLinks.uploadPrefix) {
            guard request.method == .post || request.method == .put else {
                throw ServerError(.notFound, "an upload URL takes POST")
            }
            return try await upload(&request, token: String(path.dropFirst(AssetLinks.uploadPrefix.count)), state: state)
        }
        if path.hasPrefix(AssetLinks.downloadPrefix) {
            guard request.method == .get || request.method == .head else { throw ServerError(.notFound, "a download URL takes GET") }
            // `<token>/${f}`, or any file name in place of `${f}`, or none.
            let rest = path.dropFirst(AssetLinks.downloadPrefix.count)
            let token = String(rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            return try download(token: token, head: request.method == .head, state: state)
        }
        return nil
    }

    /// POST of the bytes, raw or as multipart/form-data: stages them and answers
    /// `{"singleFile": {fileChecksum, size, receipt}}`.
    static func upload(_ request: inout Request, token: String, state: ServerState) async throws -> Response {
        let token = token.hasSuffix("/") ? String(token.dropLast()) : token
        guard let upload = Capability.decode(AssetLinks.Upload.self, from: token, purpose: .upload, secret: state.credentials.secret)
        else { throw ServerError(.notFound, "not an upload URL of this server") }
        guard upload.expires > Date().timeIntervalSince1970 else {
            throw ServerError(.authenticationFailed, "the upload URL expired; ask assets/upload for a new one")
        }
        let limit = state.store.configuration.maximumAssetSize
        let boundary = MultipartBody.boundary(contentType: request.headers[.contentType])
        state.staging.sweepIfDue()
        // A multipart body carries its framing besides the file.
        let incoming = try await state.staging.receive(request.body, limit: boundary == nil ? limit : limit + 64 * 1024)
        let staged: AssetStaging.Staged
        if let boundary {
            staged = try state.staging.stageMultipart(incoming, boundary: boundary, limit: limit)
        } else {
            staged = try state.staging.stageRaw(incoming)
        }
        let receipt = AssetLinks.Receipt(
            environment: upload.environment, database: upload.database, user: upload.user,
            expires: (Date().timeIntervalSince1970 + AssetLinks.receiptLifetime).rounded(.up), staged: staged.name,
            sha256: staged.sha256, size: staged.size)
        let file: JSON = .object([
            ("fileChecksum", .string(AssetLinks.fileChecksum(hex: staged.sha256))), ("size", .int(staged.size)),
            ("receipt", .string(AssetLinks.receipt(receipt, state: state))),
        ])
        return ServerResponder.json(.object([("singleFile", file)]))
    }

    /// GET of a stored asset's bytes, streamed with their Content-Length.
    static func download(token: String, head: Bool, state: ServerState) throws -> Response {
        guard let download = Capability.decode(AssetLinks.Download.self, from: token, purpose: .download, secret: state.credentials.secret),
            !download.path.hasPrefix("/"), !download.path.split(separator: "/").contains("..")
        else { throw ServerError(.notFound, "not a download URL of this server") }
        guard download.expires > Date().timeIntervalSince1970 else {
            throw ServerError(.authenticationFailed, "the download URL expired; fetch the record again for a new one")
        }
        let url = state.store.directory.appendingPathComponent(download.path)
        var info = stat()
        guard stat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw ServerError(.notFound, "the asset is no longer stored")
        }
        let size = Int(info.st_size)
        var headers: HTTPFields = [.contentType: "application/octet-stream", .contentLength: String(size)]
        headers[.cacheControl] = "private, max-age=3600"
        if head { return Response(status: .ok, headers: headers, body: ResponseBody()) }
        let body = ResponseBody(contentLength: size) { writer in
            // Opened here, so a response never written leaves no descriptor open.
            let fd = open(url.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ServerError(.notFound, "the asset is no longer stored") }
            defer { close(fd) }
            var remaining = size
            while remaining > 0 {
                var buffer = ByteBufferAllocator().buffer(capacity: min(remaining, 1 << 16))
                let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: min(remaining, 1 << 16)) { bytes in
                    max(0, read(fd, bytes.baseAddress, min(remaining, bytes.count)))
                }
                guard count > 0 else { throw ServerError(.internalError, "the asset file ended early") }
                remaining -= count
                try await writer.write(buffer)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}
