-- outbox4j store-jdbi schema for PostgreSQL 15+ (table "outbox_message").
-- Usable as-is as a Flyway/Liquibase migration. JdbiOutboxStore.createSchemaIfAbsent() runs the same
-- text with the configured table name in place of outbox_message (index names follow it).
--
-- A message is claimable when dead_at IS NULL AND NOT parked AND available_at <= now: every transition
-- moves available_at (enqueue: notBefore or enqueued_at; claim: the lease end; release: the retry time;
-- extend: the new lease end; abandon: enqueued_at; dead-letter: NULL). A keyed message found behind an
-- unfinished earlier message of its key (enqueue order: seq) is parked: it leaves the claim index until
-- that message is completed or discarded (docs/per-key-order.md).
--
-- Scale-out (docs/scale-out.md): a keyed message's bucket (0-255) is computed by the database from its
-- key, so writers in any language need nothing; relays sharing the outbox are members (<table>_members,
-- leases by the database's clock) and own buckets (<table>_buckets). Parking and unparking take a
-- transaction-scoped advisory lock per bucket, so no lock table is needed here.
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
    enqueued_at   timestamptz  NOT NULL,
    available_at  timestamptz,
    parked        boolean      NOT NULL DEFAULT false,
    attempts      integer      NOT NULL DEFAULT 0,
    lease_owner   varchar(255),
    receipt       varchar(36),
    last_error    text,
    dead_at       timestamptz,
    dead_reason   text,
    CONSTRAINT "outbox_message_pkey" PRIMARY KEY (id)
);

-- A keyed message's bucket: the first byte of the MD5 of its key (io.outbox4j.api.Buckets). Added by
-- ALTER so that this script also upgrades a table created before 0.2 (a rewrite of the table).
ALTER TABLE "outbox_message" ADD COLUMN IF NOT EXISTS bucket smallint GENERATED ALWAYS AS (get_byte(decode(md5(msg_key), 'hex'), 0)) STORED;

-- The claim path: due, delayed and leased rows that are neither dead nor parked, in claim order.
CREATE INDEX IF NOT EXISTS "outbox_message_claim_idx" ON "outbox_message" (available_at, seq) WHERE dead_at IS NULL AND NOT parked;

-- The predecessor probe of a keyed candidate: the latest earlier row of its key, one backward index step.
CREATE INDEX IF NOT EXISTS "outbox_message_key_idx" ON "outbox_message" (msg_key, seq) WHERE msg_key IS NOT NULL;

-- Unparking: the parked rows of a key, first in enqueue order.
CREATE INDEX IF NOT EXISTS "outbox_message_parked_idx" ON "outbox_message" (msg_key, seq) WHERE parked;

-- The dead letters, for operators (list, replay, discard), oldest first.
CREATE INDEX IF NOT EXISTS "outbox_message_dead_idx" ON "outbox_message" (dead_at, seq) WHERE dead_at IS NOT NULL;

-- The relays sharing this outbox, each with a member lease judged by the database's clock.
CREATE TABLE IF NOT EXISTS "outbox_message_members" (
    member_id     varchar(255) NOT NULL,
    lease_until   timestamptz  NOT NULL,
    CONSTRAINT "outbox_message_members_pkey" PRIMARY KEY (member_id)
);

-- Who owns each of the 256 buckets of the key space (NULL while no relay is a member).
CREATE TABLE IF NOT EXISTS "outbox_message_buckets" (
    bucket        smallint     NOT NULL,
    owner         varchar(255),
    CONSTRAINT "outbox_message_buckets_pkey" PRIMARY KEY (bucket)
);
-- A member's buckets, read by every claim it makes.
CREATE INDEX IF NOT EXISTS "outbox_message_buckets_owner_idx" ON "outbox_message_buckets" (owner, bucket);
INSERT INTO "outbox_message_buckets" (bucket) SELECT generate_series(0, 255) ON CONFLICT DO NOTHING;
