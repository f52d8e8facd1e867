import FogStorage

/// One write request waiting for the writer thread.
///
/// `body` may run more than once (when the map must grow, or when another job of
/// its group fails, the whole group is rolled back and replayed), so it must keep
/// its effects inside the transaction. `complete` runs once, on the environment's
/// completion queue, after the group's commit (or its failure), with no transaction open
/// (``finish(_:)``).
final class WriteJob: @unchecked Sendable {
    /// Whether the job runs in a transaction of its own (never grouped, never nested).
    let alone: Bool
    private(set) var body: (LMDBWriteTransaction) throws -> Void
    private var complete: (Result<Void, any Error>) -> Void

    init(alone: Bool = false, body: @escaping (LMDBWriteTransaction) throws -> Void, complete: @escaping (Result<Void, any Error>) -> Void)
    {
        self.alone = alone
        self.body = body
        self.complete = complete
    }

    /// Lets go of the body, then runs the completion and lets go of it too. The body (and
    /// what it captured) is released before the requester resumes, so it is never the
    /// last reference to anything the requester dropped after: the writer thread, which
    /// still holds the job after handing it over, would otherwise release it, and a store
    /// closed by that release would be closed from inside a write.
    func finish(_ result: Result<Void, any Error>) {
        body = { _ in }
        let complete = self.complete
        self.complete = { _ in }
        complete(result)
    }
}

/// Holds a job's return value between the body and the completion.
final class ResultBox<T>: @unchecked Sendable {
    var value: T?

    /// The value, taken out: the box then no longer holds it.
    func take() -> T? {
        defer { value = nil }
        return value
    }
}
