import FogStorage
import PostgresNIO

/// How a failure of PostgreSQL (or of the connection to it) reaches callers.
enum PostgresFailure {
    /// SQLSTATEs after which a serializable transaction is rolled back and may run again:
    /// serialization failure and deadlock.
    static let retryableStates: Set<String> = ["40001", "40P01"]

    /// The SQLSTATE of a server error, if `error` is one.
    static func sqlState(_ error: any Error) -> String? {
        guard let error = error as? PSQLError, error.code == .server else { return nil }
        return error.serverInfo?[.sqlState]
    }

    /// Whether `error` leaves the connection unusable (it dropped, or never opened).
    static func isConnectionLost(_ error: any Error) -> Bool {
        if let state = sqlState(error) {
            // Connection exceptions, and the server shutting down or refusing connections.
            return state.hasPrefix("08") || state.hasPrefix("57P")
        }
        if let error = error as? PSQLError {
            return error.code != .server && error.code != .queryCancelled
        }
        // Channel and socket errors of NIO.
        return !(error is StorageError)
    }

    /// `error` as a ``StorageError``: `what` says what was being done, `server` where.
    static func storageError(_ error: any Error, what: String, server: String) -> StorageError {
        if let error = error as? StorageError { return error }
        let place = "PostgreSQL at \(server)"
        if isConnectionLost(error) {
            return .temporarilyUnavailable("\(place): \(what): \(reason(error))")
        }
        guard let state = sqlState(error) else { return .other("\(place): \(what): \(reason(error))") }
        switch state {
        case _ where retryableStates.contains(state):
            return .temporarilyUnavailable("\(place): \(what): \(reason(error)) (a conflicting transaction; retry)")
        case "23505": return .keyExists
        case "53100", "53200", "54000", "54001": return .full
        case "53300": return .temporarilyUnavailable("\(place): \(what): \(reason(error))")
        case "3F000", "42P01": return .notFound
        default: return .other("\(place): \(what): \(reason(error))")
        }
    }

    /// The server's message and SQLSTATE, or the connection failure.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let info = error.serverInfo {
                let message = info[.message] ?? "error"
                let state = info[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return message + state
            }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}
