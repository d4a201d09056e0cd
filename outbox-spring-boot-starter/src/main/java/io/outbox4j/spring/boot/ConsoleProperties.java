package io.outbox4j.spring.boot;

/**
 * The web console ({@code outbox-console}) under the management server: off unless enabled,
 * read-only unless write actions are enabled (docs/console.md).
 */
public class ConsoleProperties {
    /**
     * Serve the console under the Actuator base path ({@code /actuator/outbox-console/}), on the
     * management port when it has its own.
     */
    private boolean enabled;

    /**
     * Offer replay and discard of dead letters, behind a confirmation. Needs Spring Security: only
     * an authenticated user may write.
     */
    private boolean writeEnabled;

    /**
     * Let an authenticated user ask for one dead letter's payload and header values. Needs Spring
     * Security.
     */
    private boolean payloadsEnabled;

    /** Dead letters per page (1 to 500). */
    private int pageSize = 50;

    /** Creates the defaults. */
    public ConsoleProperties() {}

    /**
     * Whether the console is served.
     *
     * @return {@code false} by default
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Serves the console or not.
     *
     * @param enabled whether to serve it
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * Whether replay and discard are offered.
     *
     * @return {@code false} by default
     */
    public boolean isWriteEnabled() {
        return writeEnabled;
    }

    /**
     * Offers replay and discard or not.
     *
     * @param writeEnabled whether to offer them
     */
    public void setWriteEnabled(boolean writeEnabled) {
        this.writeEnabled = writeEnabled;
    }

    /**
     * Whether one message's payload may be shown on request.
     *
     * @return {@code false} by default
     */
    public boolean isPayloadsEnabled() {
        return payloadsEnabled;
    }

    /**
     * Allows payloads on request or not.
     *
     * @param payloadsEnabled whether to allow them
     */
    public void setPayloadsEnabled(boolean payloadsEnabled) {
        this.payloadsEnabled = payloadsEnabled;
    }

    /**
     * Dead letters per page.
     *
     * @return 50 by default
     */
    public int getPageSize() {
        return pageSize;
    }

    /**
     * Sets the dead letters per page.
     *
     * @param pageSize 1 to 500
     */
    public void setPageSize(int pageSize) {
        this.pageSize = pageSize;
    }
}
