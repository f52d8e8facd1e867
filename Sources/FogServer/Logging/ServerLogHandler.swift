import Logging

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

    /// Writes the line through `StreamLogHandler` (its format, its locked standard error),
    /// made for this line only: the metadata is formatted once, here.
    func log(event: LogEvent) {
        var line = StreamLogHandler.standardError(label: label, metadataProvider: metadataProvider)
        line.logLevel = logLevel
        line.metadata = metadata
        line.log(event: event)
    }
}
