package io.outbox4j.cli.internal;

import io.outbox4j.api.StoreUnavailableException;

/**
 * The command could not connect to the store; the message names it (without passwords) and the
 * cause. Printed as it is, unlike other store failures, whose driver messages are masked first.
 */
public final class CannotConnectException extends StoreUnavailableException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what could not be reached and why, without passwords
     * @param cause the driver's failure
     */
    public CannotConnectException(String message, Throwable cause) {
        super(message, cause);
    }
}
