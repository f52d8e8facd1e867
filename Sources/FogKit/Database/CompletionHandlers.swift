/// Runs `work` on a new task and hands its outcome to `completionHandler`, the way
/// CloudKit's completion-handler methods call back after the work is done.
///
/// Every completion-handler method of ``Database`` and ``Container`` is this over its
/// `async` twin, so the two forms cannot disagree.
func completeLater<T>(
    _ work: @escaping @Sendable () async throws -> T,
    _ completionHandler: @escaping @Sendable (Result<T, any Error>) -> Void
) {
    Task {
        do {
            completionHandler(.success(try await work()))
        } catch {
            completionHandler(.failure(error))
        }
    }
}

/// ``completeLater(_:_:)`` for CloudKit's older `(value?, error?)` handlers: exactly one
/// of the two is non-nil.
func completeLater<T>(
    _ work: @escaping @Sendable () async throws -> T,
    pair completionHandler: @escaping @Sendable (T?, (any Error)?) -> Void
) {
    completeLater(work) { result in
        switch result {
        case .success(let value): completionHandler(value, nil)
        case .failure(let error): completionHandler(nil, error)
        }
    }
}
