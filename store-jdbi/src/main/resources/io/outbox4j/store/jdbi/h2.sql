-- outbox4j store-jdbi schema for H2 2.x (table "outbox_message"; the quotes keep the name lower case).
-- Usable as-is as a Flyway/Liquibase migration. JdbiOutboxStore.createSchemaIfAbsent() runs the same
-- text with the configured table name in place of outbox_message (index names follow it).
--
-- A message is claimable exactly when dead_at IS NULL AND available_at <= now: every transition moves
-- available_at (enqueue: notBefore or the enqueue time; claim: the lease end; release: the retry time;
-- dead-letter: NULL). Times are UTC in TIMESTAMP(6).
CREATE TABLE IF NOT EXISTS "outbox_message" (
    id            VARCHAR(255)        NOT NULL,
    seq           BIGINT              GENERATED ALWAYS AS IDENTITY,
    topic         VARCHAR(255)        NOT NULL,
    msg_key       VARCHAR(255),
    module        VARCHAR(255)        NOT NULL,
    content_type  CHARACTER VARYING   NOT NULL,
    payload       BINARY VARYING      NOT NULL,
    headers       CHARACTER VARYING   NOT NULL,
    occurred_at   TIMESTAMP(6)        NOT NULL,
    not_before    TIMESTAMP(6),
    available_at  TIMESTAMP(6),
    attempts      INTEGER             DEFAULT 0 NOT NULL,
    lease_owner   VARCHAR(255),
    receipt       VARCHAR(36),
    last_error    CHARACTER VARYING,
    dead_at       TIMESTAMP(6),
    dead_reason   CHARACTER VARYING,
    CONSTRAINT "outbox_message_pkey" PRIMARY KEY (id)
);

-- The claim path: dead rows have no available_at, so the range available_at <= now holds exactly the
-- claimable rows, already in claim order ("index sorted"), whatever the number of leased or dead rows.
CREATE INDEX IF NOT EXISTS "outbox_message_claim_idx" ON "outbox_message" (available_at, seq);
