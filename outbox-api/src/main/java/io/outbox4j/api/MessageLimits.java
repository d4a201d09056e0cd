package io.outbox4j.api;

/**
 * The size limits a {@link Message} is checked against when it is built. The defaults suit every
 * supported store and broker; lower them to match a broker with smaller limits (SQS takes 256 KiB),
 * raise them only if the store and the broker accept more.
 *
 * @param maxIdLength maximum characters of a message id
 * @param maxTopicLength maximum characters of a topic
 * @param maxKeyLength maximum characters of a key
 * @param maxModuleLength maximum characters of a module name
 * @param maxPayloadBytes maximum payload size in bytes
 * @param maxHeaders maximum number of user headers
 * @param maxHeaderNameLength maximum characters of a header name
 * @param maxHeaderValueLength maximum characters of a header value
 */
public record MessageLimits(
        int maxIdLength,
        int maxTopicLength,
        int maxKeyLength,
        int maxModuleLength,
        int maxPayloadBytes,
        int maxHeaders,
        int maxHeaderNameLength,
        int maxHeaderValueLength) {

    /** The default payload limit: 1 MiB. */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

    /**
     * The defaults: 255 characters for ids, topics, keys, modules and header names; 1 MiB of
     * payload; 64 headers of 4096 characters.
     */
    public static final MessageLimits DEFAULTS =
            new MessageLimits(255, 255, 255, 255, DEFAULT_MAX_PAYLOAD_BYTES, 64, 255, 4096);

    /**
     * Limits that hold back nothing ({@link Integer#MAX_VALUE} everywhere): for a copy of a message
     * that was checked against its own limits when it was first built, such as one read back from a
     * store or one given a few more headers on its way to the broker.
     */
    public static final MessageLimits UNLIMITED =
            new MessageLimits(
                    Integer.MAX_VALUE,
                    Integer.MAX_VALUE,
                    Integer.MAX_VALUE,
                    Integer.MAX_VALUE,
                    Integer.MAX_VALUE,
                    Integer.MAX_VALUE,
                    Integer.MAX_VALUE,
                    Integer.MAX_VALUE);

    /**
     * Validates the limits.
     *
     * @param maxIdLength the max id length
     * @param maxTopicLength the max topic length
     * @param maxKeyLength the max key length
     * @param maxModuleLength the max module length
     * @param maxPayloadBytes the max payload bytes
     * @param maxHeaders the max headers
     * @param maxHeaderNameLength the max header name length
     * @param maxHeaderValueLength the max header value length
     * @throws IllegalArgumentException if a limit is below 1 (headers: below 0)
     */
    public MessageLimits {
        Checks.atLeast(maxIdLength, 1, "maxIdLength");
        Checks.atLeast(maxTopicLength, 1, "maxTopicLength");
        Checks.atLeast(maxKeyLength, 1, "maxKeyLength");
        Checks.atLeast(maxModuleLength, 1, "maxModuleLength");
        Checks.atLeast(maxPayloadBytes, 0, "maxPayloadBytes");
        Checks.atLeast(maxHeaders, 0, "maxHeaders");
        Checks.atLeast(maxHeaderNameLength, 1, "maxHeaderNameLength");
        Checks.atLeast(maxHeaderValueLength, 0, "maxHeaderValueLength");
    }

    /**
     * Returns these limits with another payload limit.
     *
     * @param bytes the payload limit in bytes
     * @return a copy with the new payload limit
     */
    public MessageLimits withMaxPayloadBytes(int bytes) {
        return new MessageLimits(
                maxIdLength,
                maxTopicLength,
                maxKeyLength,
                maxModuleLength,
                bytes,
                maxHeaders,
                maxHeaderNameLength,
                maxHeaderValueLength);
    }
}
