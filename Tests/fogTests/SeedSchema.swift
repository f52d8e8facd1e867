/// A schema like the seed apps' (the photo-sharing `Post` and `Comment`, the CMS
/// `Communication` with its image asset, ChibiStudio's `AppFeatures` and `PublishedChibi`
/// behind an `Admin` role, the CloudNotes `Note`), written the way a person edits a `.ckdb`
/// file: comments of each kind, keywords in mixed case, quotes where none are needed, items
/// out of order, one role's grants split. It uses `LIST<…>`, `ENCRYPTED`, pinned and unpinned
/// `NUMBER`s, every index option and a reserved word as a field name.
enum SeedSchema {
    static let text = """
        -- The seed apps' schema, as one container's (fog's schema tests).
        DEFINE SCHEMA
            create role Admin;
            CREATE ROLE Editor;   // notes shared with editors

            RECORD TYPE Post (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___createdBy" REFERENCE QUERYABLE,
                caption STRING QUERYABLE SEARCHABLE SORTABLE,
                photo ASSET,
                commentCount NUMBER PREFERRED AS INT64 QUERYABLE SORTABLE,
                tags LIST<STRING> QUERYABLE SEARCHABLE,
                timestamp TIMESTAMP QUERYABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );

            RECORD TYPE Comment (
                post REFERENCE QUERYABLE,  -- delete-self, to its Post
                text STRING SEARCHABLE,
                timestamp TIMESTAMP SORTABLE,
                GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world"
            );

            Record Type Communication (  /* the CMS record */
                "description" STRING,
                "type" STRING QUERYABLE,
                image ASSET,
                identifier INT64 QUERYABLE,
                isCurrent INT64 QUERYABLE,
                title STRING,
                version INT64 QUERYABLE SORTABLE,
                GRANT READ TO "_world",
                GRANT READ, CREATE, WRITE TO Admin
            );

            RECORD TYPE AppFeatures (
                "___modTime" TIMESTAMP QUERYABLE SORTABLE,
                chibiVersionCheck INT64,
                tipJar INT64,
                GRANT READ TO "_world",
                GRANT READ, CREATE, WRITE TO Admin
            );

            RECORD TYPE PublishedChibi (
                entityData BYTES,
                expiresAt TIMESTAMP QUERYABLE SORTABLE,
                locales LIST<STRING> QUERYABLE,
                popularity NUMBER QUERYABLE SORTABLE,
                scores LIST<NUMBER PREFERRED AS DOUBLE>,
                weights LIST<NUMBER>,
                previews LIST<ASSET>,
                GRANT READ TO "_world",
                GRANT WRITE TO Admin, GRANT READ, CREATE TO Admin
            );

            RECORD TYPE Note (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___recordID" REFERENCE QUERYABLE,
                title STRING QUERYABLE SEARCHABLE SORTABLE,
                content ENCRYPTED STRING,
                location LOCATION QUERYABLE,
                reminders LIST<ENCRYPTED TIMESTAMP>,
                "grant" STRING,
                attachments LIST<BYTES>,
                GRANT WRITE TO "_creator", GRANT READ TO Editor
            );

            RECORD TYPE Users (
                "___recordID" REFERENCE QUERYABLE,
                roles LIST<INT64>,
                GRANT WRITE TO "_creator",
                GRANT READ TO "_world"
            );
        """

    /// The canonical text of ``text``: what `fog schema export` prints after importing it.
    static let canonical = """
        DEFINE SCHEMA

            CREATE ROLE Admin;
            CREATE ROLE Editor;

            RECORD TYPE AppFeatures (
                "___createTime"   TIMESTAMP,
                "___createdBy"    REFERENCE,
                "___etag"         STRING,
                "___modTime"      TIMESTAMP QUERYABLE SORTABLE,
                "___modifiedBy"   REFERENCE,
                "___recordID"     REFERENCE,
                chibiVersionCheck INT64,
                tipJar            INT64,
                GRANT READ TO "_world",
                GRANT READ, CREATE, WRITE TO Admin
            );

            RECORD TYPE Comment (
                "___createTime" TIMESTAMP,
                "___createdBy"  REFERENCE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE,
                post            REFERENCE QUERYABLE,
                text            STRING SEARCHABLE,
                timestamp       TIMESTAMP SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );

            RECORD TYPE Communication (
                "___createTime" TIMESTAMP,
                "___createdBy"  REFERENCE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE,
                description     STRING,
                identifier      INT64 QUERYABLE,
                image           ASSET,
                isCurrent       INT64 QUERYABLE,
                title           STRING,
                type            STRING QUERYABLE,
                version         INT64 QUERYABLE SORTABLE,
                GRANT READ TO "_world",
                GRANT READ, CREATE, WRITE TO Admin
            );

            RECORD TYPE Note (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___createdBy"  REFERENCE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE QUERYABLE,
                attachments     LIST<BYTES>,
                content         ENCRYPTED STRING,
                "grant"         STRING,
                location        LOCATION QUERYABLE,
                reminders       LIST<ENCRYPTED TIMESTAMP>,
                title           STRING QUERYABLE SEARCHABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT READ TO Editor
            );

            RECORD TYPE Post (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___createdBy"  REFERENCE QUERYABLE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE,
                caption         STRING QUERYABLE SEARCHABLE SORTABLE,
                commentCount    NUMBER PREFERRED AS INT64 QUERYABLE SORTABLE,
                photo           ASSET,
                tags            LIST<STRING> QUERYABLE SEARCHABLE,
                timestamp       TIMESTAMP QUERYABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );

            RECORD TYPE PublishedChibi (
                "___createTime" TIMESTAMP,
                "___createdBy"  REFERENCE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE,
                entityData      BYTES,
                expiresAt       TIMESTAMP QUERYABLE SORTABLE,
                locales         LIST<STRING> QUERYABLE,
                popularity      NUMBER QUERYABLE SORTABLE,
                previews        LIST<ASSET>,
                scores          LIST<NUMBER PREFERRED AS DOUBLE>,
                weights         LIST<NUMBER>,
                GRANT READ TO "_world",
                GRANT READ, CREATE, WRITE TO Admin
            );

            RECORD TYPE Users (
                "___createTime" TIMESTAMP,
                "___createdBy"  REFERENCE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE QUERYABLE,
                roles           LIST<INT64>,
                GRANT WRITE TO "_creator",
                GRANT READ TO "_world"
            );

        """
}
