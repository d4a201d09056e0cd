package io.outbox4j.tck.archfixture;

import io.outbox4j.api.Message;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.util.logging.Logger;

/** Small classes the ArchUnit rules are tried on: each one keeps or breaks one rule. */
public final class ArchFixtures {
    private ArchFixtures() {}

    /** Domain code that uses outbox4j only through its ports. */
    public static final class CleanDomainService {
        public Message orderPlaced(String id) {
            return Message.builder().id(id).topic("orders").module("orders").payload("{}").build();
        }
    }

    /** Domain code that reaches past the ports into a concrete store. */
    public static final class LeakyDomainService {
        public int pending(InMemoryOutboxStore store) {
            return store.size();
        }
    }

    /** Prints and logs the old way. */
    public static final class Chatty {
        private static final Logger LOG = Logger.getLogger("chatty");

        public void hello() {
            System.out.println("hello");
            LOG.info("hello");
        }
    }
}
