package io.outbox4j.examples.quickstart;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.store.mongo.MongoOutboxStore;
import org.bson.Document;

/**
 * The order service on MongoDB: the order document and its event are written in one multi-document
 * transaction, which needs a replica set (or a sharded cluster).
 */
final class MongoBackend implements StoreBackend {
    private final MongoClient client;
    private final MongoOutboxStore outbox;
    private final MongoCollection<Document> orders;
    private final String uri;

    MongoBackend(String uri) {
        this.uri = uri;
        this.client = MongoClients.create(uri);
        // tag::mongo-setup[]
        this.outbox = MongoOutboxStore.builder().client(client).database("quickstart").build();
        outbox.createIndexes();
        // end::mongo-setup[]
        this.orders = client.getDatabase("quickstart").getCollection("orders");
    }

    @Override
    public OutboxStore store() {
        return outbox;
    }

    @Override
    public void placeOrder(Order order, Message event) {
        // tag::mongo-enqueue[]
        try (ClientSession session = client.startSession()) {
            session.withTransaction(
                    () -> {
                        orders.insertOne(
                                session,
                                new Document("_id", order.id())
                                        .append("customer", order.customer())
                                        .append("amount", order.amount()));
                        outbox.enqueue(session, event);
                        return null;
                    });
        }
        // end::mongo-enqueue[]
    }

    @Override
    public long orderCount(String idPrefix) {
        return orders.countDocuments(
                Filters.regex("_id", "^" + java.util.regex.Pattern.quote(idPrefix)));
    }

    @Override
    public String describe() {
        return "MongoDB (" + uri.replaceAll("//[^@/]*@", "//***@") + ")";
    }

    @Override
    public void close() {
        client.close();
    }
}
