import FogKit
import Foundation

/// `subscriptions/list`, `subscriptions/lookup` and `subscriptions/modify`.
enum SubscriptionEndpoints {
    static var table: [String: Endpoint] { [:] }
}
