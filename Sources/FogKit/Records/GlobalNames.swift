// CloudKit's global string constants, without the `CK` prefix, so that code that names them
// ports by renaming. Each equals the member FogKit reaches it through.

/// The name of the default zone, `"_defaultZone"` (CloudKit's `CKRecordZoneDefaultName`;
/// also ``RecordZone/ID/defaultZoneName``).
public let RecordZoneDefaultName = RecordZone.ID.defaultZoneName

/// The record name of a zone-wide share, `"cloudkit.zoneshare"` (CloudKit's
/// `CKRecordNameZoneWideShare`; also ``Share/zoneWideShareRecordName``).
public let RecordNameZoneWideShare = Share.zoneWideShareRecordName

/// The record type of user records, `"Users"` (CloudKit's `CKRecordTypeUserRecord`; also
/// ``Record/SystemType/userRecord``).
public let RecordTypeUserRecord = Record.SystemType.userRecord

/// The record type of shares, `"cloudkit.share"` (CloudKit's `CKRecordTypeShare`; also
/// ``Record/SystemType/share``).
public let RecordTypeShare = Record.SystemType.share
