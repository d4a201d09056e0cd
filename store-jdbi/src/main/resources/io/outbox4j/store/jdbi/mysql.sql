-- outbox4j store-jdbi schema for MySQL 8 (table `outbox_message`): MariaDB's, but MySQL has no ADD COLUMN IF
-- NOT EXISTS, so the bucket column is declared in CREATE TABLE; a table created before 0.2 is upgraded with
-- ALTER TABLE `outbox_message` ADD COLUMN bucket SMALLINT AS (CONV(LEFT(MD5(msg_key), 2), 16, 10)) STORED
-- (see CHANGELOG.md).
-- Usable as-is as a Flyway/Liquibase migration. JdbiOutboxStore.createSchemaIfAbsent() runs the same
-- text with the configured table name in place of outbox_message (index and lock table names follow it).
--
-- A message is claimable when dead_at IS NULL AND parked = FALSE AND available_at <= now: every
-- transition moves available_at (enqueue: notBefore or enqueued_at; claim: the lease end; release: the
-- retry time; extend: the new lease end; abandon: enqueued_at; dead-letter: NULL). A keyed message found
-- behind an unfinished earlier message of its key (enqueue order: seq) is parked until that message is
-- completed or discarded (docs/per-key-order.md). MariaDB has no partial index: the claim index leads
-- with parked and dead_at, so the claim reads the (parked = FALSE, dead_at IS NULL, available_at <= now)
-- range in claim order (no filesort, so InnoDB locks only the rows it returns); parked and dead rows
-- sit apart, and the range ends at now whether the optimizer reads it as a range or a ref.
-- Times are UTC in DATETIME(6) (no session time zone conversion); utf8mb4_bin keeps ids exact.
--
-- Scale-out (docs/scale-out.md): a keyed message's bucket (0-255) is computed by the database from its
-- key, so writers in any language need nothing; relays sharing the outbox are members (<table>_members,
-- leases by the database's clock) and own buckets (<table>_buckets, whose rows also serve as the
-- per-bucket locks of parking and unparking).
CREATE TABLE IF NOT EXISTS `outbox_message` (
    id            VARCHAR(255) NOT NULL,
    seq           BIGINT       NOT NULL AUTO_INCREMENT,
    topic         VARCHAR(255) NOT NULL,
    msg_key       VARCHAR(255) NULL,
    module        VARCHAR(255) NOT NULL,
    content_type  TEXT         NOT NULL,
    payload       LONGBLOB     NOT NULL,
    headers       MEDIUMTEXT   NOT NULL,
    occurred_at   DATETIME(6)  NOT NULL,
    not_before    DATETIME(6)  NULL,
    enqueued_at   DATETIME(6)  NOT NULL,
    available_at  DATETIME(6)  NULL,
    parked        BOOLEAN      NOT NULL DEFAULT FALSE,
    attempts      INT          NOT NULL DEFAULT 0,
    lease_owner   VARCHAR(255) NULL,
    receipt       CHAR(36)     NULL,
    last_error    TEXT         NULL,
    dead_at       DATETIME(6)  NULL,
    dead_reason   TEXT         NULL,
    bucket        SMALLINT     AS (CONV(LEFT(MD5(msg_key), 2), 16, 10)) STORED,
    PRIMARY KEY (id),
    UNIQUE KEY `outbox_message_seq_uk` (seq),
    KEY `outbox_message_claim_idx` (parked, dead_at, available_at, seq),
    KEY `outbox_message_key_idx` (msg_key, seq),
    KEY `outbox_message_parked_idx` (parked, msg_key, seq),
    KEY `outbox_message_dead_idx` (dead_at, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Lock rows: 'members' is the membership lock of 0.2 (one writer of the bucket assignment at a time);
-- 'claim' was the claim lock of 0.1, kept for 0.1 relays during a rolling upgrade (docs/scale-out.md).
CREATE TABLE IF NOT EXISTS `outbox_message_lock` (
    name          VARCHAR(16)  NOT NULL,
    PRIMARY KEY (name)
) ENGINE=InnoDB;
INSERT IGNORE INTO `outbox_message_lock` (name) VALUES ('claim'), ('members');

-- The relays sharing this outbox, each with a member lease judged by the database's clock (UTC).
CREATE TABLE IF NOT EXISTS `outbox_message_members` (
    member_id     VARCHAR(255) NOT NULL,
    lease_until   DATETIME(6)  NOT NULL,
    PRIMARY KEY (member_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Who owns each of the 256 buckets of the key space (NULL while no relay is a member).
CREATE TABLE IF NOT EXISTS `outbox_message_buckets` (
    bucket        SMALLINT     NOT NULL,
    owner         VARCHAR(255) NULL,
    PRIMARY KEY (bucket),
    KEY `outbox_message_buckets_owner_idx` (owner, bucket)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT IGNORE INTO `outbox_message_buckets` (bucket) SELECT hi.d * 16 + lo.d FROM (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10 UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) hi CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10 UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) lo;
