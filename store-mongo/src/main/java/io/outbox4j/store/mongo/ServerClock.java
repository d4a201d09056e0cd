package io.outbox4j.store.mongo;

import com.mongodb.MongoCommandException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoDatabase;
import java.time.Instant;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * The MongoDB server's clock, read with one command: the {@code localTime} (a BSON date, in
 * milliseconds) that the {@code hello} command returns, from the primary. A server that does not
 * know {@code hello} (MongoDB 4.2 before 4.2.10, and mongo-java-server, the in-JVM test server) is
 * asked {@code isMaster} instead, which returns the same field; which one works is remembered.
 *
 * <p>Member leases are started and judged by this clock (or by {@code $$NOW} inside a query, the
 * same clock), never by the JVM's: see {@link Members}. There is no fallback to the JVM's clock: a
 * server that reports no {@code localTime} makes membership operations fail with an {@link
 * io.outbox4j.api.OutboxException} saying so.
 */
final class ServerClock {
    /** The server's error code for an unknown command. */
    private static final int COMMAND_NOT_FOUND = 59;

    private static final String LOCAL_TIME = "localTime";

    private final MongoDatabase database;
    private volatile boolean helloUnknown;

    ServerClock(MongoDatabase database) {
        this.database = database;
    }

    /**
     * The server's time now.
     *
     * @throws com.mongodb.MongoException if the server fails
     * @throws io.outbox4j.api.OutboxException if the server reports no {@code localTime}
     */
    Instant now() {
        BsonDocument reply;
        if (helloUnknown) {
            reply = run("isMaster");
        } else {
            try {
                reply = run("hello");
            } catch (MongoCommandException e) {
                if (e.getErrorCode() != COMMAND_NOT_FOUND) {
                    throw e;
                }
                helloUnknown = true;
                reply = run("isMaster");
            }
        }
        BsonValue time = reply.get(LOCAL_TIME);
        if (time == null || !time.isDateTime()) {
            throw Failures.of(
                    "MongoDB outbox "
                            + database.getName()
                            + ": the server's "
                            + (helloUnknown ? "isMaster" : "hello")
                            + " reply has no localTime date ("
                            + (time == null ? "missing" : time.getBsonType())
                            + "); member leases are judged by the server's clock and cannot be"
                            + " kept without it");
        }
        return Instant.ofEpochMilli(time.asDateTime().getValue());
    }

    private BsonDocument run(String command) {
        return database.runCommand(
                new BsonDocument(command, new BsonInt32(1)),
                ReadPreference.primary(),
                BsonDocument.class);
    }
}
