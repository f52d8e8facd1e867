import Foundation

/// An operation that works on a container rather than one of its databases: the sharing
/// operations (``FetchShareMetadataOperation``, ``AcceptSharesOperation``,
/// ``FetchShareParticipantsOperation``), which CloudKit derives from `CKOperation` directly.
///
/// Hand it to ``Container/add(_:)``, which sets ``container`` and runs it.
public class ContainerOperation: CloudOperation, @unchecked Sendable {
    /// The container the operation works on; set by ``Container/add(_:)``.
    public var container: Container?

    override func run() {
        guard let container else {
            return finish(
                with: FogError(
                    .invalidArguments, message: "the operation has no container: add it with Container.add(_:) or set its container"))
        }
        guard !container.closed.isSet else {
            return finish(with: FogError(.internalError, message: "the container is closed"))
        }
        execute(in: container)
    }

    /// Does the work and reports it through the callbacks. Subclasses override it.
    func execute(in container: Container) {}

    /// The error of a batch in which some items failed, or `nil` when none did.
    static func partialFailure(_ partial: [AnyHashable: any Error], of count: Int, _ what: String) -> FogError? {
        partial.isEmpty
            ? nil : FogError(.partialFailure, message: "\(partial.count) of \(count) \(what) failed", partialErrorsByItemID: partial)
    }
}

extension Container {
    /// Runs `operation` on this container, as CloudKit's `CKContainer.add(_:)`: a
    /// ``ContainerOperation`` gets this container; a ``DatabaseOperation`` without a
    /// database gets the container's ``privateCloudDatabase``, as in CloudKit.
    /// Inside `configuredWith(configuration:group:body:)`, the operation takes that call's
    /// configuration and group (see ``CloudOperation/effectiveConfiguration``).
    public func add(_ operation: CloudOperation) {
        operation.prepareForAdding()
        if let operation = operation as? ContainerOperation { operation.container = self }
        if let operation = operation as? DatabaseOperation {
            if operation.database == nil { operation.database = privateCloudDatabase }
            operation.keepIfLongLived()
        }
        privateCloudDatabase.operationQueue.addOperation(operation)
    }
}
