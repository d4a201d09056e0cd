package io.outbox4j.store.mongo;

import static io.outbox4j.store.mongo.Documents.fields;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.result.UpdateResult;
import io.outbox4j.api.Buckets;
import io.outbox4j.api.Member;
import io.outbox4j.api.Membership;
import io.outbox4j.api.OutboxException;
import io.outbox4j.api.OutboxMembership;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * The members of one outbox and the owners of its {@value Buckets#COUNT} buckets ({@link
 * OutboxMembership}), in two collections next to the outbox collection:
 *
 * <pre>
 * &lt;collection&gt;.members  { _id: memberId, leaseUntil: date }                 one per member
 * &lt;collection&gt;.buckets  { _id: "owners", owners: [256 × memberId|null], version: long }
 * </pre>
 *
 * <p><b>The server's clock.</b> A renewal reads the server's time {@code T} once ({@link
 * ServerClock}: {@code hello}'s {@code localTime}), writes {@code leaseUntil = T + lease} and
 * judges every other member at {@code T}; {@link #members()} and {@link #leave} read {@code T} the
 * same way. A claim as a member checks the lease inside its own query with {@code $expr: {$gt:
 * ["$leaseUntil", "$$NOW"]}}: the server's clock at the claim, never a value cached from a renewal.
 * The JVM's clock is not used for any membership decision.
 *
 * <p><b>One owners document.</b> The whole assignment is one document, so a handover is atomic: a
 * claim reads either the owners before it or after it, never a mix. Renewals and leaves are
 * serialised by a compare-and-set on its {@code version}: each reads the version <em>first</em>,
 * then the live members, computes {@link Buckets#assign} over them and replaces the document only
 * if the version is unchanged (an upsert on {@code {_id, version}}; a duplicate key means another
 * writer won), retrying otherwise. Reading the version before the members makes a write lost only
 * to a writer that saw every member whose own write came earlier, so a member that renewed is never
 * left out of the assignment by a slower, stale writer. When the assignment is already right
 * nothing is written.
 *
 * <p>Without multi-document transactions the member document and the owners document are written
 * one after the other; a crash between the two leaves a member recorded but not yet assigned (or a
 * departed member still named as owner, whose buckets nobody claims keyed messages of) until the
 * next renewal of any member, which writes the assignment again. Ownership is about throughput:
 * per-key order never depends on it.
 */
final class Members {
    /** The {@code _id} of the owners document. */
    static final String OWNERS_ID = "owners";

    static final String LEASE_UNTIL = "leaseUntil";
    static final String OWNERS = "owners";
    static final String VERSION = "version";

    /** How many compare-and-set rounds one renewal or leave tries before it gives up. */
    static final int MAX_ROUNDS = 100;

    private static final String ID = "_id";

    private final MongoCollection<BsonDocument> members;
    private final MongoCollection<BsonDocument> buckets;
    private final ServerClock clock;

    Members(
            MongoCollection<BsonDocument> members,
            MongoCollection<BsonDocument> buckets,
            ServerClock clock) {
        this.members = members;
        this.buckets = buckets;
        this.clock = clock;
    }

    /** See {@link OutboxMembership#renew}; the arguments are checked by the caller. */
    Membership renew(String member, Duration lease) {
        Instant now = clock.now();
        Instant until = now.plus(lease).truncatedTo(ChronoUnit.MILLIS);
        BsonDocument mine = new BsonDocument(ID, new BsonString(member));
        BsonDocument setLease =
                new BsonDocument(
                        "$set",
                        new BsonDocument(LEASE_UNTIL, new BsonDateTime(until.toEpochMilli())));
        members.updateOne(mine, setLease, new UpdateOptions().upsert(true));
        dropLapsed(now);
        for (int round = 0; round < MAX_ROUNDS; round++) {
            Owners before = owners();
            SortedSet<String> live = live(now);
            if (!live.contains(member)) {
                // Left between the upsert and this read: the renewal comes after the leave.
                members.updateOne(mine, setLease, new UpdateOptions().upsert(true));
                continue;
            }
            String[] next = assignment(live);
            int moved = before.differences(next);
            if (moved == 0 || before.replaceWith(next)) {
                List<Integer> owned = new ArrayList<>();
                for (int b = 0; b < Buckets.COUNT; b++) {
                    if (member.equals(next[b])) {
                        owned.add(b);
                    }
                }
                return new Membership(member, owned, new ArrayList<>(live), until, now, moved);
            }
            pause(round);
        }
        throw tooBusy("renew");
    }

    /** See {@link OutboxMembership#leave}. */
    void leave(String member) {
        long removed =
                members.deleteOne(new BsonDocument(ID, new BsonString(member))).getDeletedCount();
        if (removed == 0 && !owners().names(member)) {
            return; // not a member, and owns nothing: nothing changes
        }
        Instant now = clock.now();
        dropLapsed(now);
        for (int round = 0; round < MAX_ROUNDS; round++) {
            Owners before = owners();
            SortedSet<String> live = live(now);
            live.remove(member); // a renewal racing the leave does not bring it back here
            String[] next = live.isEmpty() ? new String[Buckets.COUNT] : assignment(live);
            if (before.differences(next) == 0 || before.replaceWith(next)) {
                return;
            }
            pause(round);
        }
        throw tooBusy("leave");
    }

    /** See {@link OutboxMembership#members()}. */
    List<Member> members() {
        Instant now = clock.now();
        Owners owners = owners();
        List<Member> out = new ArrayList<>();
        for (BsonDocument d : members.find()) {
            BsonValue id = d.get(ID);
            BsonValue until = d.get(LEASE_UNTIL);
            if (id == null || !id.isString() || until == null || !until.isDateTime()) {
                continue; // not a member document this store wrote
            }
            String name = id.asString().getValue();
            Instant leaseUntil = Instant.ofEpochMilli(until.asDateTime().getValue());
            out.add(new Member(name, leaseUntil, leaseUntil.isAfter(now), owners.count(name)));
        }
        out.sort((a, b) -> a.id().compareTo(b.id()));
        return out;
    }

    /** The server's clock now (a member's claims are timed by it). */
    Instant serverNow() {
        return clock.now();
    }

    /**
     * The buckets a claim as {@code owner} may take keyed messages of: those the owners document
     * gives it, while its lease lasts by the server's clock at this read ({@code $$NOW}); none
     * otherwise.
     */
    Set<Integer> claimable(String owner) {
        Owners owners = owners();
        Set<Integer> owned = new TreeSet<>();
        for (int b = 0; b < Buckets.COUNT; b++) {
            if (owner.equals(owners.owners[b])) {
                owned.add(b);
            }
        }
        if (owned.isEmpty()) {
            return owned;
        }
        BsonDocument live =
                new BsonDocument(ID, new BsonString(owner))
                        .append(
                                "$expr",
                                new BsonDocument(
                                        "$gt",
                                        new BsonArray(
                                                List.of(
                                                        new BsonString("$" + LEASE_UNTIL),
                                                        new BsonString("$$NOW")))));
        boolean isLive = members.find(live).projection(fields(ID)).first() != null;
        return isLive ? owned : Set.of();
    }

    /** Removes every member and the assignment; for tests in this package. */
    void clear() {
        members.deleteMany(new BsonDocument());
        buckets.deleteMany(new BsonDocument());
    }

    /** Removes the members that are not live at {@code now} (malformed ones included). */
    private void dropLapsed(Instant now) {
        members.deleteMany(
                new BsonDocument(
                        LEASE_UNTIL,
                        new BsonDocument(
                                "$not",
                                new BsonDocument("$gt", new BsonDateTime(now.toEpochMilli())))));
    }

    /** The ids of the members live at {@code now}, in id order. */
    private SortedSet<String> live(Instant now) {
        TreeSet<String> live = new TreeSet<>();
        for (BsonDocument d :
                members.find(
                                new BsonDocument(
                                        LEASE_UNTIL,
                                        new BsonDocument(
                                                "$gt", new BsonDateTime(now.toEpochMilli()))))
                        .projection(fields(ID))) {
            BsonValue id = d.get(ID);
            if (id != null && id.isString()) {
                live.add(id.asString().getValue());
            }
        }
        return live;
    }

    private static String[] assignment(Collection<String> live) {
        String[] next = new String[Buckets.COUNT];
        for (Map.Entry<String, List<Integer>> e : Buckets.assign(live).entrySet()) {
            for (int b : e.getValue()) {
                next[b] = e.getKey();
            }
        }
        return next;
    }

    private Owners owners() {
        BsonDocument d = buckets.find(new BsonDocument(ID, new BsonString(OWNERS_ID))).first();
        return new Owners(d);
    }

    /** The owners document as read: who owns each bucket, and the version to compare and set. */
    private final class Owners {
        final @Nullable String[] owners = new String[Buckets.COUNT];
        private final @Nullable BsonValue version;

        Owners(@Nullable BsonDocument d) {
            this.version = d == null ? null : d.get(VERSION);
            BsonValue list = d == null ? null : d.get(OWNERS);
            if (list != null && list.isArray() && list.asArray().size() == Buckets.COUNT) {
                BsonArray array = list.asArray();
                for (int b = 0; b < Buckets.COUNT; b++) {
                    BsonValue o = array.get(b);
                    owners[b] = o.isString() ? o.asString().getValue() : null;
                }
            }
        }

        boolean names(String member) {
            return Arrays.asList(owners).contains(member);
        }

        int count(String member) {
            int n = 0;
            for (String o : owners) {
                n += member.equals(o) ? 1 : 0;
            }
            return n;
        }

        int differences(@Nullable String[] next) {
            int moved = 0;
            for (int b = 0; b < Buckets.COUNT; b++) {
                if (!Objects.equals(owners[b], next[b])) {
                    moved++;
                }
            }
            return moved;
        }

        /**
         * Replaces the owners document if its version is still the one read.
         *
         * @return {@code false} if another writer changed it first
         */
        boolean replaceWith(@Nullable String[] next) {
            BsonArray array = new BsonArray(Buckets.COUNT);
            for (String o : next) {
                array.add(o == null ? BsonNull.VALUE : new BsonString(o));
            }
            long nextVersion =
                    version != null && version.isNumber() ? version.asNumber().longValue() + 1 : 1;
            BsonDocument same =
                    new BsonDocument(ID, new BsonString(OWNERS_ID))
                            .append(
                                    VERSION,
                                    version == null
                                            ? new BsonDocument("$exists", BsonBoolean.FALSE)
                                            : version);
            try {
                UpdateResult r =
                        buckets.updateOne(
                                same,
                                new BsonDocument(
                                        "$set",
                                        new BsonDocument(OWNERS, array)
                                                .append(VERSION, new BsonInt64(nextVersion))),
                                new UpdateOptions().upsert(true));
                return r.getMatchedCount() == 1 || r.getUpsertedId() != null;
            } catch (MongoWriteException e) {
                if (e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY) {
                    return false; // the document exists with another version: someone else won
                }
                throw e;
            }
        }
    }

    /** Waits a little, at random, before the next compare-and-set round. */
    private void pause(int round) {
        Pause.beforeRound(
                round,
                250,
                "MongoDB outbox "
                        + buckets.getNamespace()
                        + ": a membership change was interrupted while retrying");
    }

    private OutboxException tooBusy(String what) {
        return Failures.of(
                "MongoDB outbox "
                        + buckets.getNamespace()
                        + ": "
                        + what
                        + " lost the compare-and-set of the bucket assignment "
                        + MAX_ROUNDS
                        + " times in a row to other members' renewals; try again");
    }
}
