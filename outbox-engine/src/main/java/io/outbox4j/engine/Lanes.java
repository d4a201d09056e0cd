package io.outbox4j.engine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Splits a claimed batch into lanes (the messages sharing a key, in claim order; a message without
 * a key is a lane of its own) and deals the lanes to at most {@code workers} groups, balanced by
 * message count. A group publishes the heads of its lanes together, so a key never appears twice in
 * one call nor in two groups.
 */
final class Lanes {
    private Lanes() {}

    /** A sequence of same-key deliveries, published one after the other. */
    static final class Lane {
        final List<Tracked> items = new ArrayList<>();
        private int next;

        @Nullable Tracked head() {
            return next < items.size() ? items.get(next) : null;
        }

        void advance() {
            next++;
        }

        /**
         * The deliveries not yet handed to the publisher, then marks the lane finished: nothing
         * more of it is published in this batch.
         */
        List<Tracked> takeRest() {
            List<Tracked> rest =
                    new ArrayList<>(items.subList(Math.min(next, items.size()), items.size()));
            next = items.size();
            return rest;
        }

        int firstIndex() {
            return items.get(0).index;
        }
    }

    /** The lanes one worker owns. */
    static final class Group {
        final List<Lane> lanes = new ArrayList<>();
        int messages;

        /** The lanes that still have a delivery to publish. */
        List<Lane> open() {
            List<Lane> open = new ArrayList<>();
            for (Lane lane : lanes) {
                if (lane.head() != null) {
                    open.add(lane);
                }
            }
            return open;
        }
    }

    static List<Group> plan(List<Tracked> claimed, int workers) {
        Map<String, Lane> byKey = new LinkedHashMap<>();
        List<Lane> lanes = new ArrayList<>();
        for (Tracked t : claimed) {
            String key = t.delivery.message().key().orElse(null);
            Lane lane = key == null ? null : byKey.get(key);
            if (lane == null) {
                lane = new Lane();
                lanes.add(lane);
                if (key != null) {
                    byKey.put(key, lane);
                }
            }
            lane.items.add(t);
            t.lane = lane;
        }
        List<Group> groups = new ArrayList<>();
        for (int i = 0; i < Math.min(workers, lanes.size()); i++) {
            groups.add(new Group());
        }
        // Longest lanes first, each to the least loaded group (ties: the earlier group).
        List<Lane> bySize = new ArrayList<>(lanes);
        bySize.sort(Comparator.comparingInt((Lane l) -> l.items.size()).reversed());
        for (Lane lane : bySize) {
            Group least = groups.get(0);
            for (Group g : groups) {
                if (g.messages < least.messages) {
                    least = g;
                }
            }
            least.lanes.add(lane);
            least.messages += lane.items.size();
        }
        for (Group g : groups) {
            g.lanes.sort(Comparator.comparingInt(Lane::firstIndex));
        }
        return groups;
    }
}
