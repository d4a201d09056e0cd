package io.outbox4j.cli.internal;

/** The store could not be reached; the message names it (without passwords) and the cause. */
public final class StoreUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what could not be reached and why
     * @param cause the driver's failure
     */
    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
