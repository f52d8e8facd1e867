import Hummingbird
import NIOCore

/// The context of a request: Hummingbird's core context and the client's address, which
/// the sign-in limit counts failed attempts by (``SignInThrottle``).
struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The address of the connection's peer; `nil` when the channel has none.
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address as text (or a socket path), for counting attempts by client.
    var clientAddress: String? { remoteAddress?.ipAddress ?? remoteAddress?.pathname }
}
