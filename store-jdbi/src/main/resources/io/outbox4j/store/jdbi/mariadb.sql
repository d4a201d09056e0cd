-- outbox4j store-jdbi schema for MariaDB 10.6+ and MySQL 8 (table `outbox_message`).
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
    PRIMARY KEY (id),
    UNIQUE KEY `outbox_message_seq_uk` (seq),
    KEY `outbox_message_claim_idx` (parked, dead_at, available_at, seq),
    KEY `outbox_message_key_idx` (msg_key, seq),
    KEY `outbox_message_parked_idx` (parked, msg_key, seq),
    KEY `outbox_message_dead_idx` (dead_at, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The claim lock: claims (and removals of keyed rows) lock this one row until they commit.
CREATE TABLE IF NOT EXISTS `outbox_message_lock` (
    name          VARCHAR(16)  NOT NULL,
    PRIMARY KEY (name)
) ENGINE=InnoDB;
INSERT IGNORE INTO `outbox_message_lock` (name) VALUES ('claim');
