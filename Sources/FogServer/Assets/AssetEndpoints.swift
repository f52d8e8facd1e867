import FogKit
import Foundation

/// `assets/upload` and `assets/rereference`.
enum AssetEndpoints {
    static var table: [String: Endpoint] { [:] }
}
