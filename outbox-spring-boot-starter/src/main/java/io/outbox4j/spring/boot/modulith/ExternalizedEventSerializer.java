package io.outbox4j.spring.boot.modulith;

import io.outbox4j.api.Message;

/**
 * Turns an externalized event (the result of Spring Modulith's {@code
 * EventExternalizationConfiguration.map}) into a message's payload and content type. The default
 * writes a {@code String} as UTF-8 text, a {@code byte[]} as it is and anything else as JSON with
 * the application's Jackson {@code JsonMapper}; declare a bean of this type to change it.
 */
@FunctionalInterface
public interface ExternalizedEventSerializer {
    /**
     * Sets the payload and content type (and, if wanted, further headers) of the message.
     *
     * @param event the mapped event
     * @param message the message being built; id, topic, key, module and Modulith's headers are set
     */
    void serialize(Object event, Message.Builder message);
}
