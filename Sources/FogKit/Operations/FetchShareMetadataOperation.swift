import Foundation

/// Fetches the metadata of shares by URL (CloudKit's `CKFetchShareMetadataOperation`), as
/// ``Container/shareMetadata(for:)`` does for one URL.
///
/// Callbacks, in order: ``perShareMetadataResultBlock`` (and the older
/// ``perShareMetadataBlock``) for each URL, then ``fetchShareMetadataResultBlock`` (and the
/// older ``fetchShareMetadataCompletionBlock``). Each URL fails on its own, as
/// ``Container/shareMetadata(for:)`` fails (``FogError/Code/unknownItem`` for a share that no
/// longer exists, ``FogError/Code/participantMayNeedVerification`` for a user a private share
/// does not name, ``FogError/Code/invalidArguments`` for a URL that is not a share's), and the
/// operation then with ``FogError/Code/partialFailure``, keyed by URL. A container opened for
/// nobody fails the whole operation with ``FogError/Code/notAuthenticated``.
public final class FetchShareMetadataOperation: ContainerOperation, @unchecked Sendable {
    /// The URLs of the shares (``Share/url``).
    public var shareURLs: [URL]?
    /// Whether each metadata carries its share's root record (``Share/Metadata/rootRecord``);
    /// ignored for zone-wide shares. `false` by default.
    public var shouldFetchRootRecord = false
    /// The root record's fields to fetch: `nil` for all, `[]` for none.
    public var rootRecordDesiredKeys: [Record.FieldKey]?

    /// Called for each URL with its share's metadata or the URL's error.
    public var perShareMetadataResultBlock: ((URL, Result<Share.Metadata, any Error>) -> Void)?
    /// Called once at the end.
    public var fetchShareMetadataResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older per-URL callback.
    @available(*, deprecated, renamed: "perShareMetadataResultBlock")
    public var perShareMetadataBlock: ((URL, Share.Metadata?, (any Error)?) -> Void)? {
        get { legacyPerShare }
        set { legacyPerShare = newValue }
    }
    /// The older final callback.
    @available(*, deprecated, renamed: "fetchShareMetadataResultBlock")
    public var fetchShareMetadataCompletionBlock: (((any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyPerShare: ((URL, Share.Metadata?, (any Error)?) -> Void)?
    private var legacyCompletion: (((any Error)?) -> Void)?

    /// Creates an operation that fetches the metadata of the shares at `shareURLs`.
    public convenience init(shareURLs: [URL]) {
        self.init()
        self.shareURLs = shareURLs
    }

    override func execute(in container: Container) {
        do {
            _ = try container.shareUser(.shareMetadata)
        } catch {
            return finish(with: error)
        }
        let urls = shareURLs ?? []
        var partial: [AnyHashable: any Error] = [:]
        for url in urls {
            let result = Result {
                try container.metadata(for: url, fetchingRoot: shouldFetchRootRecord, rootKeys: rootRecordDesiredKeys)
            }
            switch result {
            case .success(let metadata): legacyPerShare?(url, metadata, nil)
            case .failure(let error):
                partial[url] = error
                legacyPerShare?(url, nil, error)
            }
            perShareMetadataResultBlock?(url, result)
        }
        let error = Self.partialFailure(partial, of: urls.count, "share metadata fetches")
        fetchShareMetadataResultBlock?(error.map { .failure($0) } ?? .success(()))
        legacyCompletion?(error)
    }

    override func finish(with error: FogError) {
        for url in shareURLs ?? [] {
            perShareMetadataResultBlock?(url, .failure(error))
            legacyPerShare?(url, nil, error)
        }
        fetchShareMetadataResultBlock?(.failure(error))
        legacyCompletion?(error)
    }
}
