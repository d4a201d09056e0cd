package io.outbox4j.store.jdbi;

import java.util.Map;
import java.util.Set;

/**
 * What a deletion removed: the leases (or ids), and how many rows each key lost.
 *
 * @param <T> {@link Receipt.Lease} or the id
 * @param removed what was removed
 * @param keys the keys of removed rows, with the number of rows each lost
 */
record Removed<T>(Set<T> removed, Map<String, Integer> keys) {}
