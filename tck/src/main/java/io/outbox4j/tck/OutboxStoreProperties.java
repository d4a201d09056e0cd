package io.outbox4j.tck;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * The store contract as a property (jqwik): random sequences of enqueues (committed and rolled
 * back, keys that collide, some without a key, some delayed), claims by three owners through two
 * store instances, completions, releases, dead letters, renewals, give-backs, replays and discards
 * through the admin port, and a clock that moves forward, each checked against a model of the
 * {@link io.outbox4j.api.OutboxStore} contract: who may hold what, per-key order, attempts, stale
 * receipts, and at the end that every committed message is drained exactly once. A failing sequence
 * is shrunk to a short one and printed step by step with the rule it broke.
 *
 * <p>It complements {@link OutboxStoreContract} (one example per rule) by finding the interleavings
 * nobody wrote down. Extend this class in your test sources and return your contract subclass,
 * whose factories it uses (store, second store, reset, enqueue in a committed and a rolled-back
 * transaction, admin, {@code transactionsUnsupported()}, {@code clockSkewTolerance()}):
 *
 * <pre>{@code
 * class MyStorePropertiesTest extends OutboxStoreProperties { // *Test: surefire runs it
 *     @Override
 *     protected OutboxStoreContract contract() {
 *         return new MyStoreContractTest();
 *     }
 * }
 * }</pre>
 *
 * <p>The contract's factories are called without JUnit's lifecycle methods: create servers and
 * pools in static fields or lazily (as the README's example does). jqwik runs on the JUnit Platform
 * beside Jupiter: add {@code net.jqwik:jqwik} (it comes with {@code outbox-tck}) and surefire runs
 * both.
 *
 * <p>Size: {@value #DEFAULT_TRIES} sequences of up to {@value #DEFAULT_STEPS} steps by default (a
 * few seconds on a local database); raise them with the system properties {@value #TRIES_PROPERTY}
 * and {@value #STEPS_PROPERTY} (e.g. {@code -Doutbox4j.properties.tries=1000}). A failure prints
 * the seed; jqwik re-runs the failing seed first on the next run, and {@value #SEED_PROPERTY} runs
 * the sequences of a given seed again anywhere.
 */
public abstract class OutboxStoreProperties {
    /** System property: how many random sequences to try. */
    public static final String TRIES_PROPERTY = "outbox4j.properties.tries";

    /** System property: the longest sequence, in steps. */
    public static final String STEPS_PROPERTY = "outbox4j.properties.steps";

    /** System property: the random seed (e.g. one printed by a failure); random when absent. */
    public static final String SEED_PROPERTY = "outbox4j.properties.seed";

    /** Sequences tried unless {@value #TRIES_PROPERTY} says otherwise. */
    public static final int DEFAULT_TRIES = 30;

    /** Steps per sequence at most unless {@value #STEPS_PROPERTY} says otherwise. */
    public static final int DEFAULT_STEPS = 40;

    private static final int KEYS = 3;

    /** Creates the property; subclasses supply the contract whose factories it uses. */
    protected OutboxStoreProperties() {}

    /**
     * Returns the store kit subclass whose factories build, fill and reset the store under test.
     * Called for each try (each random sequence); may return a new instance every time.
     *
     * @return your {@link OutboxStoreContract} subclass
     */
    protected abstract OutboxStoreContract contract();

    @Property(shrinking = ShrinkingMode.FULL)
    @AddLifecycleHook(TriesFromSystemProperty.class)
    void required_randomOperationSequencesMatchTheContractModel(
            @ForAll("operationSequences") List<StoreStep> steps) {
        new StoreModelRun(contract()).run(steps);
    }

    @Provide
    Arbitrary<List<StoreStep>> operationSequences() {
        return step().list()
                .ofMinSize(1)
                .ofMaxSize(Integer.getInteger(STEPS_PROPERTY, DEFAULT_STEPS));
    }

    /** One step; enqueues and claims come most often, so that there is something to act on. */
    static Arbitrary<StoreStep> step() {
        Arbitrary<Integer> owner = Arbitraries.integers().between(0, StoreModelRun.OWNERS - 1);
        Arbitrary<Integer> pick = Arbitraries.integers().between(0, 30);
        Arbitrary<List<Integer>> picks = pick.list().ofMinSize(1).ofMaxSize(4);
        Arbitrary<StoreStep> enqueue =
                Combinators.combine(
                                Arbitraries.integers()
                                        .between(-1, KEYS - 1)
                                        .list()
                                        .ofMinSize(1)
                                        .ofMaxSize(4),
                                Arbitraries.frequencyOf(
                                        net.jqwik.api.Tuple.of(4, Arbitraries.just(0)),
                                        net.jqwik.api.Tuple.of(
                                                1, Arbitraries.integers().between(1, 20))),
                                Arbitraries.of(false, false, false, true))
                        .as(StoreStep.Enqueue::new);
        Arbitrary<StoreStep> claim =
                Combinators.combine(
                                owner,
                                Arbitraries.integers().between(1, 6),
                                Arbitraries.of(2, 5, 30))
                        .as(StoreStep.Claim::new);
        Arbitrary<StoreStep> complete =
                Combinators.combine(owner, picks, Arbitraries.of(false, false, false, true))
                        .as(StoreStep.Complete::new);
        Arbitrary<StoreStep> release =
                Combinators.combine(owner, pick, Arbitraries.of(0, 3, 10))
                        .as(StoreStep.Release::new);
        Arbitrary<StoreStep> deadLetter =
                Combinators.combine(owner, pick).as(StoreStep.DeadLetter::new);
        Arbitrary<StoreStep> extend =
                Combinators.combine(owner, picks, Arbitraries.of(5, 60)).as(StoreStep.Extend::new);
        Arbitrary<StoreStep> abandon = Combinators.combine(owner, picks).as(StoreStep.Abandon::new);
        Arbitrary<StoreStep> admin =
                Combinators.combine(pick, Arbitraries.of(false, true)).as(StoreStep.Admin::new);
        Arbitrary<StoreStep> advance = Arbitraries.of(1, 2, 4, 8, 40).map(StoreStep.Advance::new);
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(5, enqueue),
                net.jqwik.api.Tuple.of(6, claim),
                net.jqwik.api.Tuple.of(4, complete),
                net.jqwik.api.Tuple.of(2, release),
                net.jqwik.api.Tuple.of(2, deadLetter),
                net.jqwik.api.Tuple.of(2, extend),
                net.jqwik.api.Tuple.of(2, abandon),
                net.jqwik.api.Tuple.of(1, admin),
                net.jqwik.api.Tuple.of(3, advance));
    }

    /**
     * Sets the tries from {@value #TRIES_PROPERTY} (default {@value #DEFAULT_TRIES}) and the seed
     * from {@value #SEED_PROPERTY} when it is set.
     */
    public static final class TriesFromSystemProperty implements AroundPropertyHook {
        /** Created by jqwik. */
        public TriesFromSystemProperty() {}

        @Override
        public PropertyExecutionResult aroundProperty(
                PropertyLifecycleContext context, PropertyExecutor property) {
            String tries = System.getProperty(TRIES_PROPERTY);
            int n;
            try {
                n = tries == null ? DEFAULT_TRIES : Integer.parseInt(tries.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        TRIES_PROPERTY + " must be a whole number, but was '" + tries + "'", e);
            }
            if (n < 1) {
                throw new IllegalArgumentException(
                        TRIES_PROPERTY + " must be at least 1, but was " + n);
            }
            context.attributes().setTries(n);
            String seed = System.getProperty(SEED_PROPERTY);
            if (seed != null && !seed.isBlank()) {
                try {
                    Long.parseLong(seed.trim());
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(
                            SEED_PROPERTY + " must be a whole number, but was '" + seed + "'", e);
                }
                context.attributes().setSeed(seed.trim());
            }
            return property.execute();
        }
    }
}
