package io.outbox4j.cli.internal;

/**
 * A setting or argument that is missing, unknown or malformed. The message names the setting, where
 * it came from and what was wrong; nothing was changed when it is thrown.
 */
public final class SettingsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was wrong, naming the setting and its source
     */
    public SettingsException(String message) {
        super(message);
    }
}
