package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Buckets;
import io.outbox4j.api.Membership;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.IntStream;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A member's claim tries the bucket locks for its parking only of the buckets it still owns ({@link
 * SqlDialect#tryLockOwnedBuckets}): a claim that outlived a handover holds no lock of a bucket
 * another member owns now, so a claimer that goes silent inside its claim stalls none of the new
 * owner's completions (docs/scale-out.md). Checked on every dialect: the locks of the other
 * member's buckets stay free for another transaction, and those of its own are held.
 */
class ParkOnlyOwnedBucketsTest {
    private static final String TABLE = "outbox_park_owned";

    private static Jdbi jdbi(String database) {
        return switch (database) {
            case "postgresql" -> Databases.postgres();
            case "mariadb" -> Databases.mariaDb();
            default -> Databases.h2("park_owned");
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb", "h2"})
    void aMembersParkingLocksOnlyTheBucketsItStillOwns(String database) {
        Jdbi jdbi = jdbi(database);
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).tableName(TABLE).build();
        store.createSchemaIfAbsent();
        store.clearMembers();
        store.renew("member-a", Duration.ofMinutes(1));
        Membership b = store.renew("member-b", Duration.ofMinutes(1));
        Set<Integer> ofB = new TreeSet<>(b.buckets());
        Set<Integer> ofA = new TreeSet<>(IntStream.range(0, Buckets.COUNT).boxed().toList());
        ofA.removeAll(ofB);
        List<Integer> every = IntStream.range(0, Buckets.COUNT).boxed().toList();
        SqlDialect dialect = store.sql();

        try (Handle claim = jdbi.open();
                Handle other = jdbi.open()) {
            Set<Integer> locked =
                    dialect.inTransaction(
                            claim,
                            h -> {
                                Set<Integer> got =
                                        dialect.tryLockOwnedBuckets(h, every, "member-a");
                                // while the claim's transaction holds its locks, another
                                // transaction can take every lock of member-b's buckets and
                                // none of member-a's
                                Set<Integer> free =
                                        dialect.inTransaction(
                                                other, o -> dialect.tryLockBuckets(o, every));
                                assertThat(new TreeSet<>(free))
                                        .as(
                                                "%s: the locks left free by member-a's parking",
                                                database)
                                        .isEqualTo(ofB);
                                return got;
                            });
            assertThat(new TreeSet<>(locked))
                    .as("%s: the buckets member-a's parking locked", database)
                    .isEqualTo(ofA);

            Set<Integer> all =
                    dialect.inTransaction(
                            claim,
                            h -> dialect.tryLockOwnedBuckets(h, new ArrayList<>(every), null));
            assertThat(all).as("%s: a claim of every bucket tries them all", database).hasSize(256);
        } finally {
            store.clearMembers();
        }
    }
}
