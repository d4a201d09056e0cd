-- outbox4j store-jdbi schema for H2 2.x (table "outbox_message"; the quotes keep the name lower case).
-- Usable as-is as a Flyway/Liquibase migration. JdbiOutboxStore.createSchemaIfAbsent() runs the same
-- text with the configured table name in place of outbox_message (index and lock table names follow it).
--
-- A message is claimable when dead_at IS NULL AND parked = FALSE AND available_at <= now: every
-- transition moves available_at (enqueue: notBefore or enqueued_at; claim: the lease end; release: the
-- retry time; extend: the new lease end; abandon: enqueued_at; dead-letter: NULL). A keyed message found
-- behind an unfinished earlier message of its key (enqueue order: seq) is parked until that message is
-- completed or discarded (docs/per-key-order.md). Times are UTC in TIMESTAMP(6).
--
-- Scale-out (docs/scale-out.md): a keyed message's bucket (0-255) is computed by the database from its
-- key; relays sharing the outbox are members (<table>_members) and own buckets (<table>_buckets, whose
-- rows also serve as the per-bucket locks of parking and unparking).
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
    enqueued_at   TIMESTAMP(6)        NOT NULL,
    available_at  TIMESTAMP(6),
    parked        BOOLEAN             DEFAULT FALSE NOT NULL,
    attempts      INTEGER             DEFAULT 0 NOT NULL,
    lease_owner   VARCHAR(255),
    receipt       VARCHAR(36),
    last_error    CHARACTER VARYING,
    dead_at       TIMESTAMP(6),
    dead_reason   CHARACTER VARYING,
    CONSTRAINT "outbox_message_pkey" PRIMARY KEY (id)
);

-- A keyed message's bucket: the first byte of the MD5 of its key (io.outbox4j.api.Buckets). Added by
-- ALTER so that this script also upgrades a table created before 0.2.
ALTER TABLE "outbox_message" ADD COLUMN IF NOT EXISTS bucket SMALLINT GENERATED ALWAYS AS (BITAND(CAST(CAST(SUBSTRING(HASH('MD5', msg_key), 1, 1) AS TINYINT) AS INT), 255));

-- The claim path: rows not parked, in claim order ("index sorted"); dead rows have no available_at
-- and sort last, so the range available_at <= now reads exactly the claimable rows.
CREATE INDEX IF NOT EXISTS "outbox_message_claim_idx" ON "outbox_message" (parked, available_at NULLS LAST, seq);

-- The predecessor probe of a keyed candidate: the latest earlier row of its key, the first entry read.
CREATE INDEX IF NOT EXISTS "outbox_message_key_idx" ON "outbox_message" (msg_key, seq DESC);

-- Unparking: the parked rows of a key, first in enqueue order.
CREATE INDEX IF NOT EXISTS "outbox_message_parked_idx" ON "outbox_message" (parked, msg_key, seq);

-- The dead letters, for operators (list, replay, discard), oldest first.
CREATE INDEX IF NOT EXISTS "outbox_message_dead_idx" ON "outbox_message" (dead_at NULLS LAST, seq);

-- Lock rows: 'members' is the membership lock of 0.2 (one writer of the bucket assignment at a time);
-- 'claim' was the claim lock of 0.1, kept for 0.1 relays during a rolling upgrade (docs/scale-out.md).
CREATE TABLE IF NOT EXISTS "outbox_message_lock" (
    name          VARCHAR(16)         NOT NULL,
    CONSTRAINT "outbox_message_lock_pkey" PRIMARY KEY (name)
);
MERGE INTO "outbox_message_lock" (name) KEY (name) VALUES ('claim'), ('members');

-- The relays sharing this outbox, each with a member lease (UTC).
CREATE TABLE IF NOT EXISTS "outbox_message_members" (
    member_id     VARCHAR(255)        NOT NULL,
    lease_until   TIMESTAMP(6)        NOT NULL,
    CONSTRAINT "outbox_message_members_pkey" PRIMARY KEY (member_id)
);

-- Who owns each of the 256 buckets of the key space (NULL while no relay is a member).
CREATE TABLE IF NOT EXISTS "outbox_message_buckets" (
    bucket        SMALLINT            NOT NULL,
    owner         VARCHAR(255),
    CONSTRAINT "outbox_message_buckets_pkey" PRIMARY KEY (bucket)
);
-- A member's buckets, read by every claim it makes.
CREATE INDEX IF NOT EXISTS "outbox_message_buckets_owner_idx" ON "outbox_message_buckets" (owner, bucket);
MERGE INTO "outbox_message_buckets" (bucket) KEY (bucket) SELECT X FROM SYSTEM_RANGE(0, 255);
