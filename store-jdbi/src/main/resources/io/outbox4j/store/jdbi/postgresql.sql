-- outbox4j store-jdbi schema for PostgreSQL 15+ (table "outbox_message").
-- Usable as-is as a Flyway/Liquibase migration. JdbiOutboxStore.createSchemaIfAbsent() runs the same
-- text with the configured table name in place of outbox_message (index names follow it).
--
-- A message is claimable exactly when dead_at IS NULL AND available_at <= now: every transition moves
-- available_at (enqueue: notBefore or the enqueue time; claim: the lease end; release: the retry time;
-- dead-letter: NULL), so the claim path is one range scan of the partial index below, whatever the
-- number of leased, delayed or dead rows.
CREATE TABLE IF NOT EXISTS "outbox_message" (
    id            varchar(255) NOT NULL,
    seq           bigint       GENERATED ALWAYS AS IDENTITY,
    topic         varchar(255) NOT NULL,
    msg_key       varchar(255),
    module        varchar(255) NOT NULL,
    content_type  text         NOT NULL,
    payload       bytea        NOT NULL,
    headers       text         NOT NULL,
    occurred_at   timestamptz  NOT NULL,
    not_before    timestamptz,
    available_at  timestamptz,
    attempts      integer      NOT NULL DEFAULT 0,
    lease_owner   varchar(255),
    receipt       varchar(36),
    last_error    text,
    dead_at       timestamptz,
    dead_reason   text,
    CONSTRAINT "outbox_message_pkey" PRIMARY KEY (id)
);

-- The claim path: pending, delayed and leased rows that are not dead, in claim order.
CREATE INDEX IF NOT EXISTS "outbox_message_claim_idx" ON "outbox_message" (available_at, seq) WHERE dead_at IS NULL;

-- The dead letters, for operators (list, replay, purge).
CREATE INDEX IF NOT EXISTS "outbox_message_dead_idx" ON "outbox_message" (dead_at) WHERE dead_at IS NOT NULL;
