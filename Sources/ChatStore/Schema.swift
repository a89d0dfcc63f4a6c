import GRDB

extension SQLiteChatStorage {
    /// The schema this binary writes. A file whose migrations go beyond it is refused.
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE contact (
                    address TEXT PRIMARY KEY NOT NULL,
                    handle TEXT NOT NULL,
                    displayName TEXT NOT NULL,
                    muted INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE message (
                    id INTEGER PRIMARY KEY,
                    txId TEXT NOT NULL UNIQUE,
                    conversation TEXT NOT NULL,
                    direction TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    body TEXT NOT NULL,
                    blockTime INTEGER NOT NULL,
                    receivedAt INTEGER NOT NULL,
                    via TEXT NOT NULL,
                    unread INTEGER NOT NULL DEFAULT 0);
                -- latest N messages of a conversation, and its last activity
                CREATE INDEX message_by_conversation ON message(conversation, blockTime);
                -- unread per conversation
                CREATE INDEX message_unread ON message(conversation) WHERE unread = 1;
                CREATE TABLE syncCursor (
                    object TEXT PRIMARY KEY NOT NULL,
                    lastFetchedBlockTime INTEGER);
                CREATE TABLE engineState (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    pushState TEXT NOT NULL,
                    consecutiveMisses INTEGER NOT NULL,
                    lastReregisterAt INTEGER,
                    lastCatchUpAt INTEGER,
                    tokenStatus TEXT NOT NULL);
                CREATE TABLE setting (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE TABLE pendingPush (
                    id INTEGER PRIMARY KEY,
                    txId TEXT NOT NULL, conversation TEXT NOT NULL, kind TEXT NOT NULL,
                    body TEXT NOT NULL, blockTime INTEGER NOT NULL, arrivedAt INTEGER NOT NULL);
                """)
            // The profile's world had its three tables here; they are its own part now
            // (`SchemaPart`, SimulatedWorldInProfile's `world/…`), made if missing when a profile
            // first keeps its world, so a file written before keeps its rows and its history of
            // migrations.
        }
        // Search: a full-text index of message bodies (SQLite FTS5), kept by a
        // trigger in the transaction that stores the message. It reads the bodies through a
        // view of the message table (external content), so the text is not stored twice.
        // Each message's conversation is one more token, in its own column (`c` and the
        // address in hex), so that a search in one conversation is an AND of two lists
        // inside the index rather than every hit of a common word filtered afterwards. Tokens are
        // Unicode words (letters, digits and their marks: an Indic word stays whole), case-
        // and diacritic-insensitive; `SearchQuery` cuts and folds them the same way. Messages are never changed or
        // deleted, so an insert trigger is the whole upkeep. A store written before it gets
        // its index built once, when this binary first opens it.
        m.registerMigration("v2-search") { db in
            try db.execute(sql: """
                CREATE VIEW message_text AS
                    SELECT id, CAST(body AS TEXT) AS body, 'c' || hex(conversation) AS conversation FROM message;
                CREATE VIRTUAL TABLE message_search USING fts5(
                    body, conversation, content='message_text', content_rowid='id',
                    tokenize="unicode61 remove_diacritics 2 categories 'L* N* Co M*'");
                CREATE TRIGGER message_search_insert AFTER INSERT ON message BEGIN
                    INSERT INTO message_search(rowid, body, conversation)
                    VALUES (new.id, CAST(new.body AS TEXT), 'c' || hex(new.conversation));
                END;
                INSERT INTO message_search(message_search) VALUES ('rebuild');
                """)
        }
        // The outbox: messages written that the network has not taken yet.
        m.registerMigration("v3-outbox") { db in
            try db.execute(sql: """
                CREATE TABLE outbox (
                    position INTEGER PRIMARY KEY,
                    localId TEXT NOT NULL UNIQUE, conversation TEXT NOT NULL, body BLOB NOT NULL,
                    createdAt INTEGER NOT NULL, failures INTEGER NOT NULL);
                """)
        }
        // Counters: what the screen and the engine read on every frame and every
        // message — unread per conversation, the badge, last activity, the message count —
        // kept by triggers in the transaction that changes a message, so that no read scans
        // the message table (at 1 000 000 messages, `COUNT(*) … WHERE unread = 1` takes 24 ms
        // and the two GROUP BYs at start 100 ms). A store written before it is counted once,
        // when this binary first opens it.
        m.registerMigration("v4-counters") { db in
            try db.execute(sql: """
                CREATE TABLE conversationCounter (
                    conversation TEXT PRIMARY KEY NOT NULL,
                    messages INTEGER NOT NULL,
                    unread INTEGER NOT NULL,
                    lastActivity INTEGER NOT NULL) WITHOUT ROWID;
                INSERT INTO conversationCounter (conversation, messages, unread, lastActivity)
                    SELECT conversation, COUNT(*), SUM(unread), MAX(blockTime) FROM message GROUP BY conversation;
                CREATE TRIGGER conversationCounter_insert AFTER INSERT ON message BEGIN
                    INSERT INTO conversationCounter (conversation, messages, unread, lastActivity)
                    VALUES (new.conversation, 1, new.unread, new.blockTime)
                    ON CONFLICT(conversation) DO UPDATE SET
                        messages = messages + 1,
                        unread = unread + excluded.unread,
                        lastActivity = MAX(lastActivity, excluded.lastActivity);
                END;
                CREATE TRIGGER conversationCounter_read AFTER UPDATE OF unread ON message
                    WHEN new.unread != old.unread BEGIN
                    UPDATE conversationCounter SET unread = unread + new.unread - old.unread
                    WHERE conversation = new.conversation;
                END;
                """)
        }
        return m
    }
}
