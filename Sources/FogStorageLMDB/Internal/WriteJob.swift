import FogStorage

/// One write request waiting for the writer thread.
///
/// `body` may run more than once (when the map must grow, or when another job of
/// its group fails, the whole group is rolled back and replayed), so it must keep
/// its effects inside the transaction. `complete` runs once, on the writer thread,
/// after the group's commit (or its failure), with no transaction open.
final class WriteJob: @unchecked Sendable {
    /// Whether the job runs in a transaction of its own (never grouped, never nested).
    let alone: Bool
    let body: (LMDBWriteTransaction) throws -> Void
    let complete: (Result<Void, any Error>) -> Void

    init(alone: Bool = false, body: @escaping (LMDBWriteTransaction) throws -> Void, complete: @escaping (Result<Void, any Error>) -> Void)
    {
        self.alone = alone
        self.body = body
        self.complete = complete
    }
}

/// Holds a job's return value between the body and the completion.
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
