package io.outbox4j.spring.boot;

import com.mongodb.client.MongoClient;
import io.outbox4j.store.mongo.MongoOutboxStore;
import org.springframework.core.env.Environment;

/**
 * Builds a MongoDB store from settings; loaded only when a MongoDB outbox is configured, so the
 * starter runs without the MongoDB driver.
 */
final class MongoStores {
    private MongoStores() {}

    /**
     * A store over {@code client} from the settings under {@code outbox4j.<prefix>.mongodb}, each
     * bad value reported under its property's name.
     */
    static MongoOutboxStore create(
            String prefix,
            MongoClient client,
            OutboxProperties.Mongodb mongo,
            Environment environment) {
        String database =
                Checks.required(
                        prefix + ".mongodb.database",
                        database(mongo, environment),
                        "is required for the MongoDB store (or set spring.mongodb.database)");
        MongoOutboxStore.Builder b = MongoOutboxStore.builder().client(client);
        try {
            b.database(database);
        } catch (IllegalArgumentException e) {
            throw Checks.invalid(prefix + ".mongodb.database", database, e);
        }
        try {
            b.collection(mongo.getCollection());
        } catch (IllegalArgumentException e) {
            throw Checks.invalid(prefix + ".mongodb.collection", mongo.getCollection(), e);
        }
        MongoOutboxStore store = b.build();
        if (mongo.isCreateIndexes()) {
            store.createIndexes();
        }
        return store;
    }

    /** As {@link #create}, for a client known only as an object (the driver loaded lazily). */
    static MongoOutboxStore createFrom(
            String prefix, Object client, OutboxProperties.Mongodb mongo, Environment environment) {
        return create(prefix, (MongoClient) client, mongo, environment);
    }

    /** The database a store over these settings uses, or null if none is given. */
    static @org.jspecify.annotations.Nullable String database(
            OutboxProperties.Mongodb mongo, Environment environment) {
        String database = Checks.text(mongo.getDatabase());
        return database != null
                ? database
                : Checks.text(environment.getProperty("spring.mongodb.database"));
    }
}
