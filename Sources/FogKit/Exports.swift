// `import CloudKit` brings Foundation with it, so code written for CloudKit uses `Date`, `Data`,
// `URL`, `UUID` and `NSKeyedArchiver` without importing it. `import FogKit` does the same, so
// such a file compiles with only its import changed.
@_exported import Foundation

// Where a container's store lives: `.directory(url)` here, `.postgres(url)` with
// `import FogStoragePostgres`.
@_exported import struct FogStorage.StoreLocation
