-- outbox4j store-jdbi schema for MariaDB 10.6+ and MySQL 8 (table `outbox_message`).
-- Usable as-is as a Flyway/Liquibase migration. JdbiOutboxStore.createSchemaIfAbsent() runs the same
-- text with the configured table name in place of outbox_message (index names follow it).
--
-- A message is claimable exactly when dead_at IS NULL AND available_at <= now: every transition moves
-- available_at (enqueue: notBefore or the enqueue time; claim: the lease end; release: the retry time;
-- dead-letter: NULL). MariaDB has no partial index: the claim index leads with dead_at, so the claim
-- reads the (dead_at IS NULL, available_at <= now) slice in claim order (no filesort, so InnoDB locks
-- only the rows it returns), and dead rows sit apart.
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
    available_at  DATETIME(6)  NULL,
    attempts      INT          NOT NULL DEFAULT 0,
    lease_owner   VARCHAR(255) NULL,
    receipt       CHAR(36)     NULL,
    last_error    TEXT         NULL,
    dead_at       DATETIME(6)  NULL,
    dead_reason   TEXT         NULL,
    PRIMARY KEY (id),
    UNIQUE KEY `outbox_message_seq_uk` (seq),
    KEY `outbox_message_claim_idx` (dead_at, available_at, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
