import FogKit
import FogKitTesting
import Foundation
import Testing

/// Every operation calls its final result block exactly once, whenever it is cancelled:
/// before it is added, while it waits in the queue, as it starts, while it runs, or after it
/// has finished. (Foundation's `Operation.start()` skips `main()` for an operation cancelled
/// before it gets there; an operation cancelled between FogKit's own check and Foundation's
/// once never reported at all.)
@Suite struct OperationCancellationTests {
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    /// When the test cancels an operation.
    enum Moment: CaseIterable {
        case beforeAdding, rightAfterAdding, afterASpin, afterALongerSpin, afterFinishing, never
    }

    /// Counts each operation's final result calls, and whether the last one was a cancellation.
    /// (An `NSLock`, not a `Mutex`: the thread sanitizer sees the one and not the other.)
    final class Completions: @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [Int]
        private var cancelled: [Bool]
        init(count: Int) {
            calls = Array(repeating: 0, count: count)
            cancelled = Array(repeating: false, count: count)
        }
        func record(_ index: Int, _ error: (any Error)?) {
            lock.withLock {
                calls[index] += 1
                cancelled[index] = (error as? FogError)?.code == .operationCancelled
            }
        }
        var counts: [Int] { lock.withLock { calls } }
        var wasCancelled: [Bool] { lock.withLock { cancelled } }
    }

    /// An operation of each kind (chosen by `kind`) whose final result block reports to `completions`.
    func makeOperation(kind: Int, index: Int, completions: Completions, ids: [Record.ID]) -> DatabaseOperation {
        let zoneID = RecordZone.ID(zoneName: "Stress")
        switch kind % 7 {
        case 0:
            let op = FetchRecordsOperation(recordIDs: ids)
            op.fetchRecordsResultBlock = { completions.record(index, $0.failureError) }
            return op
        case 1:
            let op = QueryOperation(query: Query(recordType: "Note", predicate: QueryPredicate(value: true)))
            op.queryResultBlock = { completions.record(index, $0.failureError) }
            return op
        case 2:
            let record = Record(recordType: "Note", recordID: Record.ID(recordName: "s\(index)"))
            let op = ModifyRecordsOperation(recordsToSave: [record])
            op.modifyRecordsResultBlock = { completions.record(index, $0.failureError) }
            return op
        case 3:
            let op = FetchRecordZonesOperation.fetchAllRecordZonesOperation()
            op.fetchRecordZonesResultBlock = { completions.record(index, $0.failureError) }
            return op
        case 4:
            let op = ModifyRecordZonesOperation(recordZonesToSave: [RecordZone(zoneID: zoneID)])
            op.modifyRecordZonesResultBlock = { completions.record(index, $0.failureError) }
            return op
        case 5:
            let op = FetchDatabaseChangesOperation(previousServerChangeToken: nil)
            op.fetchDatabaseChangesResultBlock = { completions.record(index, $0.failureError) }
            return op
        default:
            let op = FetchRecordZoneChangesOperation(recordZoneIDs: [zoneID], configurationsByRecordZoneID: nil)
            op.fetchRecordZoneChangesResultBlock = { completions.record(index, $0.failureError) }
            return op
        }
    }

    @Test func everyOperationCompletesExactlyOnceWheneverItIsCancelled() async throws {
        try await db.save(RecordZone(zoneID: RecordZone.ID(zoneName: "Stress")))
        let ids = (0..<3).map { Record.ID(recordName: "r\($0)") }
        for id in ids { try await db.save(Record(recordType: "Note", recordID: id)) }

        var generator = SplitMix64(seed: 13)
        let deadline = ContinuousClock.now + .seconds(3)
        var total = 0
        var round = 0
        // Rounds of operations on one queue, each cancelled at a random moment, until the time
        // budget is spent (at least a few rounds).
        while round < 4 || (ContinuousClock.now < deadline && round < 200) {
            let count = 400
            let completions = Completions(count: count)
            var moments: [Moment] = []
            // A queue that runs operations as soon as they are added, so that most cancellations
            // land while an operation is being started or run on another thread.
            let queue = OperationQueue()
            var operations: [DatabaseOperation] = []
            for index in 0..<count {
                let op = makeOperation(kind: generator.int(0...6), index: index, completions: completions, ids: ids)
                op.database = db
                let moment = generator.pick(Moment.allCases)
                moments.append(moment)
                operations.append(op)
                if moment == .beforeAdding { op.cancel() }
                queue.addOperation(op)
                switch moment {
                case .rightAfterAdding: op.cancel()
                case .afterASpin, .afterALongerSpin:
                    // A few nanoseconds to tens of microseconds: around the time a queue takes to
                    // start an operation on one of its threads.
                    let spins = generator.int(0...(moment == .afterASpin ? 2_000 : 40_000))
                    var x = 0
                    for i in 0..<spins { x = x &+ i &* 31 }
                    if x != 1 { op.cancel() }
                default: break
                }
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    queue.waitUntilAllOperationsAreFinished()
                    continuation.resume()
                }
            }
            for (op, moment) in zip(operations, moments) where moment == .afterFinishing { op.cancel() }
            let counts = completions.counts
            let cancelled = completions.wasCancelled
            for index in 0..<count {
                #expect(
                    counts[index] == 1,
                    "round \(round): operation \(index) (\(type(of: operations[index])), cancelled \(moments[index])) completed \(counts[index]) times"
                )
                if moments[index] == .beforeAdding {
                    #expect(cancelled[index], "round \(round): operation \(index) was cancelled before it was added")
                }
            }
            if counts.contains(where: { $0 != 1 }) { break }
            total += count
            round += 1
        }
        #expect(total >= 1_600)
    }

    @Test func anOperationCancelledBeforeItStartsReportsCancellationToEveryResultBlock() async throws {
        let id = Record.ID(recordName: "missing")
        let op = FetchRecordsOperation(recordIDs: [id])
        let log = EventLog()
        op.perRecordResultBlock = { _, result in log.append("record \(result.failureCode)") }
        op.fetchRecordsResultBlock = { result in log.append("final \(result.failureCode)") }
        op.cancel()
        await db.run(op)
        #expect(log.all == ["record operationCancelled", "final operationCancelled"])
    }
}

extension Result {
    fileprivate var failureCode: String {
        guard case .failure(let error) = self else { return "success" }
        return (error as? FogError)?.code.description ?? "\(error)"
    }
}
