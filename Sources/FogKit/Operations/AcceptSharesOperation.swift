import Foundation

/// Accepts shares as the container's user (CloudKit's `CKAcceptSharesOperation`), as
/// ``Container/accept(_:)-(Share.Metadata)`` does for one.
///
/// Callbacks, in order: ``perShareResultBlock`` (and the older ``perShareCompletionBlock``)
/// for each metadata, then ``acceptSharesResultBlock`` (and the older
/// ``acceptSharesCompletionBlock``). Each share fails on its own, as accepting one fails
/// (``FogError/Code/participantMayNeedVerification`` for a participant removed since,
/// ``FogError/Code/unknownItem`` for a share deleted since, ``FogError/Code/tooManyParticipants``),
/// and the operation then with ``FogError/Code/partialFailure``, keyed by metadata. Each share
/// is accepted in its own write, so the accepted ones stay accepted. A container opened for
/// nobody fails the whole operation with ``FogError/Code/notAuthenticated``.
public final class AcceptSharesOperation: ContainerOperation, @unchecked Sendable {
    /// The metadata of the shares to accept (from ``FetchShareMetadataOperation`` or
    /// ``Container/shareMetadata(for:)``).
    public var shareMetadatas: [Share.Metadata]?

    /// Called for each metadata with the share as the user now sees it, or the item's error.
    public var perShareResultBlock: ((Share.Metadata, Result<Share, any Error>) -> Void)?
    /// Called once at the end.
    public var acceptSharesResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older per-share callback.
    @available(*, deprecated, renamed: "perShareResultBlock")
    public var perShareCompletionBlock: ((Share.Metadata, Share?, (any Error)?) -> Void)? {
        get { legacyPerShare }
        set { legacyPerShare = newValue }
    }
    /// The older final callback.
    @available(*, deprecated, renamed: "acceptSharesResultBlock")
    public var acceptSharesCompletionBlock: (((any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyPerShare: ((Share.Metadata, Share?, (any Error)?) -> Void)?
    private var legacyCompletion: (((any Error)?) -> Void)?

    /// Creates an operation that accepts the shares `shareMetadatas` describe.
    public convenience init(shareMetadatas: [Share.Metadata]) {
        self.init()
        self.shareMetadatas = shareMetadatas
    }

    override func execute(in container: Container) {
        do {
            _ = try container.shareUser(.acceptShare)
        } catch {
            return finish(with: error)
        }
        let metadatas = shareMetadatas ?? []
        var partial: [AnyHashable: any Error] = [:]
        for metadata in metadatas {
            let result = Result { try container.acceptAndWait(metadata) }
            switch result {
            case .success(let share): legacyPerShare?(metadata, share, nil)
            case .failure(let error):
                partial[metadata] = error
                legacyPerShare?(metadata, nil, error)
            }
            perShareResultBlock?(metadata, result)
        }
        let error = Self.partialFailure(partial, of: metadatas.count, "share acceptances")
        acceptSharesResultBlock?(error.map { .failure($0) } ?? .success(()))
        legacyCompletion?(error)
    }

    override func finish(with error: FogError) {
        for metadata in shareMetadatas ?? [] {
            perShareResultBlock?(metadata, .failure(error))
            legacyPerShare?(metadata, nil, error)
        }
        acceptSharesResultBlock?(.failure(error))
        legacyCompletion?(error)
    }
}
