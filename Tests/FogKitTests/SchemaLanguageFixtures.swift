/// Schema texts the schema-language tests parse and print.
enum SchemaLanguageFixtures {
    /// The full example of reference §13.5, verbatim: every construct, comments of all three
    /// kinds, items out of canonical order.
    static let referenceExample = """
        // Example schema for a hypothetical field-notes app.
        DEFINE SCHEMA

            CREATE ROLE Moderator;
            CREATE ROLE Editor;

            RECORD TYPE Notebook (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___modTime"    TIMESTAMP SORTABLE,
                "___recordID"   REFERENCE QUERYABLE,
                title           STRING QUERYABLE SEARCHABLE SORTABLE,
                colorIndex      INT64 QUERYABLE,
                isArchived      INT64 QUERYABLE,            -- Bool stored as 0/1
                coverImage      ASSET,
                tags            LIST<STRING> QUERYABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world",
                GRANT READ, WRITE TO Moderator
            );

            RECORD TYPE Entry (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___recordID"   REFERENCE QUERYABLE,
                "___createdBy"  REFERENCE QUERYABLE,
                notebook        REFERENCE QUERYABLE,        /* parent-style link, same zone */
                body            STRING SEARCHABLE,
                rating          DOUBLE SORTABLE,
                legacyScore     NUMBER PREFERRED AS DOUBLE,
                takenAt         TIMESTAMP QUERYABLE SORTABLE,
                place           LOCATION QUERYABLE,         // which index kind LOCATION takes is unverified
                route           LIST<LOCATION>,
                photos          LIST<ASSET>,
                related         LIST<REFERENCE> QUERYABLE,
                rawSensorData   BYTES,
                privateRemark   ENCRYPTED STRING,           // no index allowed; private/shared DB only
                "grant"         STRING,                     // reserved word as a field name
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world",
                GRANT CREATE, READ, WRITE TO Editor
            );

            RECORD TYPE Users (
                "___recordID"   REFERENCE QUERYABLE,
                roles           LIST<INT64>,
                displayName     STRING,
                GRANT WRITE TO "_creator",
                GRANT READ TO "_world"
            );
        """

    /// The canonical text of ``referenceExample``.
    static let referenceExampleCanonical = """
        DEFINE SCHEMA

            CREATE ROLE Editor;
            CREATE ROLE Moderator;

            RECORD TYPE Entry (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___createdBy"  REFERENCE QUERYABLE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE QUERYABLE,
                body            STRING SEARCHABLE,
                "grant"         STRING,
                legacyScore     NUMBER PREFERRED AS DOUBLE,
                notebook        REFERENCE QUERYABLE,
                photos          LIST<ASSET>,
                place           LOCATION QUERYABLE,
                privateRemark   ENCRYPTED STRING,
                rating          DOUBLE SORTABLE,
                rawSensorData   BYTES,
                related         LIST<REFERENCE> QUERYABLE,
                route           LIST<LOCATION>,
                takenAt         TIMESTAMP QUERYABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world",
                GRANT READ, CREATE, WRITE TO Editor
            );

            RECORD TYPE Notebook (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___createdBy"  REFERENCE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP SORTABLE,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE QUERYABLE,
                colorIndex      INT64 QUERYABLE,
                coverImage      ASSET,
                isArchived      INT64 QUERYABLE,
                tags            LIST<STRING> QUERYABLE,
                title           STRING QUERYABLE SEARCHABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world",
                GRANT READ, WRITE TO Moderator
            );

            RECORD TYPE Users (
                "___createTime" TIMESTAMP,
                "___createdBy"  REFERENCE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE QUERYABLE,
                displayName     STRING,
                roles           LIST<INT64>,
                GRANT WRITE TO "_creator",
                GRANT READ TO "_world"
            );

        """

    /// The seed apps' record types (`/work/shared/seeds`), in canonical form: the photo-sharing
    /// course project (`Post` with its photo asset and comment counter, `Comment` with its
    /// delete-self reference to the post), the in-app CMS (`Communication`, with its image
    /// asset, localized strings packed in fields and `isCurrent == 1` queries), ChibiStudio's
    /// feature flags and curated collection behind a custom `Admin` role (`AppFeatures`,
    /// `PublishedChibi`), the CloudNotes `Note`, and the built-in `Users` type.
    static let seedApps = """
        DEFINE SCHEMA

            CREATE ROLE Admin;

            RECORD TYPE AppFeatures (
                "___createTime"   TIMESTAMP,
                "___createdBy"    REFERENCE,
                "___etag"         STRING,
                "___modTime"      TIMESTAMP QUERYABLE SORTABLE,
                "___modifiedBy"   REFERENCE,
                "___recordID"     REFERENCE QUERYABLE,
                chibiVersionCheck INT64,
                tipJar            INT64,
                GRANT READ TO "_world",
                GRANT READ, CREATE, WRITE TO Admin
            );

            RECORD TYPE Comment (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___createdBy"  REFERENCE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE QUERYABLE,
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
                "___recordID"   REFERENCE QUERYABLE,
                actionTitle     STRING,
                cancelTitle     STRING,
                content         STRING,
                description     STRING,
                identifier      INT64 QUERYABLE,
                image           ASSET,
                imageLabel      STRING,
                isCurrent       INT64 QUERYABLE,
                okayTitle       STRING,
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
                "___modTime"    TIMESTAMP QUERYABLE SORTABLE,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE QUERYABLE,
                content         STRING,
                location        LOCATION QUERYABLE,
                title           STRING QUERYABLE SEARCHABLE SORTABLE
            );

            RECORD TYPE Post (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___createdBy"  REFERENCE QUERYABLE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE QUERYABLE,
                caption         STRING QUERYABLE SEARCHABLE,
                commentCount    INT64,
                photo           ASSET,
                timestamp       TIMESTAMP QUERYABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );

            RECORD TYPE PublishedChibi (
                "___createTime"   TIMESTAMP,
                "___createdBy"    REFERENCE,
                "___etag"         STRING,
                "___modTime"      TIMESTAMP,
                "___modifiedBy"   REFERENCE,
                "___recordID"     REFERENCE QUERYABLE,
                entityData        BYTES,
                expiresAt         TIMESTAMP QUERYABLE SORTABLE,
                locales           LIST<STRING> QUERYABLE,
                minimumAppVersion STRING,
                publishedAt       TIMESTAMP QUERYABLE SORTABLE,
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
