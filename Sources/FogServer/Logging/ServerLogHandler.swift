import Foundation
import Logging
import Synchronization

/// FogServer's own log handler: lines to standard error in `StreamLogHandler`'s format
/// (`2026-11-28T10:40:00+0000 info FogServer: key=value [source] message`), with the
/// metadata formatted only when a line is written.
///
/// Hummingbird gives every request a logger with its own `hb.request.id`, and
/// `StreamLogHandler` formats its metadata each time metadata is set, for every request,
/// whether or not anything is logged: about 4% of a lookup's time in FogServer under load
/// (`Docs/Performance.md`, "FogServer under load"). This handler only stores the value.
struct ServerLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let explicit = event.metadata { all.merge(explicit) { _, new in new } }
        if let error = event.error {
            all["error.message"] = "\(error)"
            all["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        let pretty = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        Self.write("\(Self.timestamp()) \(event.level) \(label):\(pretty) [\(event.source)] \(event.message)\n")
    }

    /// Whole lines, one writer at a time.
    private static let output = Mutex(())

    private static func write(_ line: String) {
        var line = line
        output.withLock { _ in
            line.withUTF8 { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = Foundation.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written < 0, errno == EINTR {
                        continue
                    } else {
                        return
                    }
                }
            }
        }
    }

    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
