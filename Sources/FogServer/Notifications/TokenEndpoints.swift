import FogKit
import Foundation

/// `tokens/create` and `tokens/register`.
enum TokenEndpoints {
    static var table: [String: Endpoint] { [:] }
}
