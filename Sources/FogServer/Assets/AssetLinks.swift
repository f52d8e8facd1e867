import FogKit
import Foundation

/// The URLs assets are downloaded from.
enum AssetLinks {
    static func downloadURL(for asset: Asset, call: EndpointCall) -> String? { nil }
}
