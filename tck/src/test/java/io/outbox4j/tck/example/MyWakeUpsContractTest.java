package io.outbox4j.tck.example;

// tag::wake-ups-example[]
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxWakeUps;
import io.outbox4j.tck.InMemoryOutboxStore;
import io.outbox4j.tck.OutboxWakeUpsContract;
import java.util.List;

/** Runs every rule of the wake-up contract against the reference store; put yours in its place. */
class MyWakeUpsContractTest extends OutboxWakeUpsContract {
    private final InMemoryOutboxStore relaySide = new InMemoryOutboxStore();
    // another instance over the same messages: the writer's, as another process's would be
    private final InMemoryOutboxStore writerSide = relaySide.withDeadLettersBlockingTheirKey(true);

    @Override
    protected OutboxWakeUps wakeUps() {
        return relaySide;
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        writerSide.enqueueCommitted(messages);
    }
}
// end::wake-ups-example[]
