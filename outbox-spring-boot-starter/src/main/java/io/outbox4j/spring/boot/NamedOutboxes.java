package io.outbox4j.spring.boot;

import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.spring.boot.OutboxProperties.NamedOutbox;
import io.outbox4j.spring.boot.OutboxProperties.StoreType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The named outboxes of an application ({@code outbox4j.outboxes.<name>.*}), checked against each
 * other and against the application's beans when the first of them is built: every DataSource or
 * MongoClient named exists, none of two outboxes share a table (or collection), at most one is
 * primary. Health, endpoint and metrics find each outbox's store and relay here.
 *
 * <p>Each outbox {@code <name>} has the beans {@code <name>OutboxStore} (a {@code JdbiOutboxStore}
 * or {@code MongoOutboxStore}), {@code <name>TransactionalOutbox} (JDBC only), {@code
 * <name>OutboxRelay} and, when its own publisher settings are given, {@code <name>OutboxPublisher},
 * each qualified by {@code <name>}; the store and outbox of the primary outbox are
 * {@code @Primary}.
 */
final class NamedOutboxes {
    /** The prefix of the named outboxes' properties. */
    static final String PREFIX = OutboxProperties.PREFIX + ".outboxes";

    /** This registry's bean name. */
    static final String BEAN = "outbox4jNamedOutboxes";

    /**
     * The publisher of {@code outbox4j.publisher.*}, shared by named outboxes without their own.
     */
    static final String SHARED_PUBLISHER = "outboxPublisher";

    /** A name usable in bean names, metric tags, health paths and endpoint paths. */
    static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0,62}");

    static final String MONGO_CLIENT = "com.mongodb.client.MongoClient";
    static final String MONGO_STORE = "io.outbox4j.store.mongo.MongoOutboxStore";

    /** Where one named outbox lives. */
    enum Kind {
        JDBC,
        MONGODB
    }

    private final ConfigurableListableBeanFactory beans;
    private final Map<String, NamedOutbox> settings;
    private final Map<String, Kind> kinds;

    /** The DataSource or MongoClient of each outbox, by outbox name. */
    private final Map<String, Object> sources = new LinkedHashMap<>();

    NamedOutboxes(
            ConfigurableListableBeanFactory beans,
            Map<String, NamedOutbox> settings,
            Map<String, Kind> kinds,
            Environment environment) {
        this.beans = beans;
        this.settings = new LinkedHashMap<>(settings);
        this.kinds = Map.copyOf(kinds);
        Map<String, String> sourceNames = new LinkedHashMap<>();
        for (Map.Entry<String, NamedOutbox> e : settings.entrySet()) {
            String name = e.getKey();
            String source =
                    kinds.get(name) == Kind.JDBC
                            ? sourceBean(
                                    name,
                                    "data-source",
                                    e.getValue().getDataSource(),
                                    DataSource.class,
                                    "DataSource")
                            : sourceBean(
                                    name,
                                    "mongo-client",
                                    e.getValue().getMongoClient(),
                                    ClassUtils.resolveClassName(MONGO_CLIENT, loader()),
                                    "MongoClient");
            sourceNames.put(name, source);
            sources.put(name, beans.getBean(source));
            // the store is destroyed before its DataSource (or MongoClient)
            beans.registerDependentBean(source, storeBean(name));
        }
        refuseSharedPlaces(sourceNames, environment);
    }

    /** The named outboxes' settings as given, by name, in order; empty for a single outbox. */
    static Map<String, NamedOutbox> bind(Environment environment) {
        return Binder.get(environment)
                .bind(PREFIX, Bindable.mapOf(String.class, NamedOutbox.class))
                .orElseGet(Map::of);
    }

    static String prefix(String outbox) {
        return "outboxes." + outbox;
    }

    static String storeBean(String outbox) {
        return outbox + "OutboxStore";
    }

    static String outboxBean(String outbox) {
        return outbox + "TransactionalOutbox";
    }

    static String publisherBean(String outbox) {
        return outbox + "OutboxPublisher";
    }

    static String relayBean(String outbox) {
        return outbox + "OutboxRelay";
    }

    static String metricsBean(String outbox) {
        return outbox + "OutboxMetrics";
    }

    static String metricsBinderBean(String outbox) {
        return outbox + "OutboxMetricsRelayBinder";
    }

    /**
     * Checks what the properties alone can tell, before any bean is registered: the names, at most
     * one primary, no single-outbox setting beside named ones, a store type that fits the beans
     * named.
     */
    static void checkProperties(Map<String, NamedOutbox> named, Environment environment) {
        String primary = null;
        for (Map.Entry<String, NamedOutbox> e : named.entrySet()) {
            String name = e.getKey();
            NamedOutbox o = e.getValue();
            if (!NAME.matcher(name).matches()) {
                throw Checks.invalid(
                        prefix(name),
                        name,
                        "an outbox's name must start with a letter and hold only letters, digits, '-'"
                                + " and '_' (at most 63), as it names its beans, health entry, metrics"
                                + " tag and endpoint path");
            }
            if (o.isPrimary()) {
                if (primary != null) {
                    throw Checks.invalid(
                            prefix(name) + ".primary",
                            true,
                            "outbox '"
                                    + primary
                                    + "' is primary too; mark at most one outbox primary");
                }
                primary = name;
            }
            String dataSource = Checks.text(o.getDataSource());
            String mongoClient = Checks.text(o.getMongoClient());
            String publisherBean = Checks.text(o.getPublisherBean());
            if (publisherBean != null && Publishers.given(o.getPublisher())) {
                throw Checks.invalid(
                        prefix(name) + ".publisher-bean",
                        publisherBean,
                        "and "
                                + Checks.name(prefix(name) + ".publisher.*")
                                + " are both given; keep one of them");
            }
            StoreType type = o.getStore().getType();
            if (dataSource != null && mongoClient != null) {
                throw Checks.invalid(
                        prefix(name) + ".mongo-client",
                        mongoClient,
                        "an outbox lives in one store, but "
                                + Checks.name(prefix(name) + ".data-source")
                                + " is set too ("
                                + dataSource
                                + "); keep one of them");
            }
            if (type == StoreType.MONGODB && dataSource != null) {
                throw Checks.invalid(
                        prefix(name) + ".data-source",
                        dataSource,
                        "names a DataSource, but "
                                + Checks.name(prefix(name) + ".store.type")
                                + " is mongodb; set mongo-client instead, or store.type jdbc");
            }
            if (type == StoreType.JDBC && mongoClient != null) {
                throw Checks.invalid(
                        prefix(name) + ".mongo-client",
                        mongoClient,
                        "names a MongoClient, but "
                                + Checks.name(prefix(name) + ".store.type")
                                + " is jdbc; set data-source instead, or store.type mongodb");
            }
        }
        for (String single : List.of("store", "relay")) {
            ConfigurationPropertyName given = firstUnder(environment, Checks.name(single));
            if (given != null) {
                String suffix = given.toString().substring(OutboxProperties.PREFIX.length() + 1);
                throw Checks.invalid(
                        suffix,
                        environment.getProperty(given.toString()),
                        "configures the single outbox, but outbox4j.outboxes names "
                                + named.keySet()
                                + " and each of them has its own; set "
                                + PREFIX
                                + ".<name>."
                                + suffix
                                + " instead");
            }
        }
    }

    /** Each outbox's store kind, decided from its settings and the beans registered so far. */
    static Map<String, Kind> kinds(
            Map<String, NamedOutbox> named, ConfigurableListableBeanFactory beans) {
        Map<String, Kind> kinds = new LinkedHashMap<>();
        for (Map.Entry<String, NamedOutbox> e : named.entrySet()) {
            NamedOutbox o = e.getValue();
            Kind kind;
            if (o.getStore().getType() == StoreType.JDBC) {
                kind = Kind.JDBC;
            } else if (o.getStore().getType() == StoreType.MONGODB) {
                kind = Kind.MONGODB;
            } else if (Checks.text(o.getDataSource()) != null) {
                kind = Kind.JDBC;
            } else if (Checks.text(o.getMongoClient()) != null) {
                kind = Kind.MONGODB;
            } else if (beans.getBeanNamesForType(DataSource.class, true, false).length == 0
                    && ClassUtils.isPresent(MONGO_CLIENT, loader())
                    && beans.getBeanNamesForType(
                                            ClassUtils.resolveClassName(MONGO_CLIENT, loader()),
                                            true,
                                            false)
                                    .length
                            > 0) {
                kind = Kind.MONGODB;
            } else {
                kind = Kind.JDBC;
            }
            if (kind == Kind.MONGODB
                    && !(ClassUtils.isPresent(MONGO_STORE, loader())
                            && ClassUtils.isPresent(MONGO_CLIENT, loader()))) {
                throw Checks.invalid(
                        prefix(e.getKey()) + ".store.type",
                        "mongodb",
                        "a MongoDB outbox needs io.outbox4j:outbox-store-mongo and"
                                + " org.mongodb:mongodb-driver-sync on the classpath; add them");
            }
            kinds.put(e.getKey(), kind);
        }
        return kinds;
    }

    /** The names of the outboxes, in the order given. */
    Set<String> names() {
        return settings.keySet();
    }

    NamedOutbox settings(String outbox) {
        NamedOutbox o = settings.get(outbox);
        if (o == null) {
            throw new IllegalArgumentException("no outbox named '" + outbox + "'");
        }
        return o;
    }

    Kind kind(String outbox) {
        Kind k = kinds.get(outbox);
        if (k == null) {
            throw new IllegalArgumentException("no outbox named '" + outbox + "'");
        }
        return k;
    }

    /** The DataSource or MongoClient the outbox lives in. */
    Object source(String outbox) {
        Object s = sources.get(outbox);
        if (s == null) {
            throw new IllegalArgumentException("no outbox named '" + outbox + "'");
        }
        return s;
    }

    OutboxStore store(String outbox) {
        return beans.getBean(storeBean(outbox), OutboxStore.class);
    }

    OutboxAdmin admin(String outbox) {
        return beans.getBean(storeBean(outbox), OutboxAdmin.class);
    }

    /** The outbox's relay, or null when this application does not run one for it. */
    @Nullable RelayLifecycle relay(String outbox) {
        String name = relayBean(outbox);
        return beans.containsBean(name) ? beans.getBean(name, RelayLifecycle.class) : null;
    }

    /**
     * The bean of {@code type} an outbox names, or the application's only (or primary) one of that
     * type when it names none.
     */
    private String sourceBean(
            String outbox, String property, @Nullable String given, Class<?> type, String what) {
        String name = Checks.text(given);
        String suffix = prefix(outbox) + "." + property;
        if (name != null) {
            if (!beans.containsBean(name)) {
                throw Checks.invalid(
                        suffix,
                        name,
                        "no bean is named '"
                                + name
                                + "'; the application's "
                                + what
                                + " beans are "
                                + Arrays.toString(beans.getBeanNamesForType(type, true, false)));
            }
            if (!beans.isTypeMatch(name, type)) {
                throw Checks.invalid(
                        suffix,
                        name,
                        "the bean '"
                                + name
                                + "' is a "
                                + typeName(beans, name)
                                + ", not a "
                                + type.getName()
                                + "; the application's "
                                + what
                                + " beans are "
                                + Arrays.toString(beans.getBeanNamesForType(type, true, false)));
            }
            return name;
        }
        List<String> candidates = defaultCandidates(beans, type, Set.of());
        String chosen = uniqueOrPrimary(beans, candidates);
        if (chosen == null) {
            throw Checks.invalid(
                    suffix,
                    null,
                    candidates.isEmpty()
                            ? "is required: the application has no " + what + " bean to default to"
                            : "must name this outbox's "
                                    + what
                                    + " bean: the application has several "
                                    + candidates
                                    + " and none is primary");
        }
        return chosen;
    }

    /** No two outboxes on the same table of one DataSource, or collection of one MongoClient. */
    private void refuseSharedPlaces(Map<String, String> sourceNames, Environment environment) {
        Map<String, String> places = new LinkedHashMap<>();
        for (String name : settings.keySet()) {
            Object source = sources.get(name);
            NamedOutbox o = settings.get(name);
            String place;
            String property;
            String value;
            if (kinds.get(name) == Kind.JDBC) {
                value = o.getStore().getJdbc().getTableName();
                property = prefix(name) + ".store.jdbc.table-name";
                place = "table '" + value + "'";
            } else {
                String database = MongoStores.database(o.getStore().getMongodb(), environment);
                value = o.getStore().getMongodb().getCollection();
                property = prefix(name) + ".store.mongodb.collection";
                place = "collection '" + database + "." + value + "'";
            }
            for (Map.Entry<String, String> earlier : places.entrySet()) {
                String other = earlier.getKey();
                if (sources.get(other) == source && earlier.getValue().equals(place)) {
                    // the same DataSource (or MongoClient) object and the same table (collection)
                    throw Checks.invalid(
                            property,
                            value,
                            "outbox '"
                                    + other
                                    + "' already lives in "
                                    + place
                                    + " of the same "
                                    + (kinds.get(name) == Kind.JDBC ? "DataSource" : "MongoClient")
                                    + " ('"
                                    + sourceNames.get(name)
                                    + "'); two outboxes in one place would relay each other's"
                                    + " messages: give one of them another "
                                    + (kinds.get(name) == Kind.JDBC
                                            ? "table-name or data-source"
                                            : "collection or mongo-client"));
                }
            }
            places.put(name, place);
        }
    }

    /**
     * The beans of {@code type} an unqualified injection point would consider (autowire and default
     * candidates), less {@code except}.
     */
    static List<String> defaultCandidates(
            ConfigurableListableBeanFactory beans, Class<?> type, Set<String> except) {
        List<String> out = new ArrayList<>();
        for (String name : beans.getBeanNamesForType(type, true, false)) {
            if (except.contains(name)) {
                continue;
            }
            if (beans.containsBeanDefinition(name)) {
                BeanDefinition d = beans.getBeanDefinition(name);
                if (!d.isAutowireCandidate()
                        || (d instanceof AbstractBeanDefinition a && !a.isDefaultCandidate())) {
                    continue;
                }
            }
            out.add(name);
        }
        return out;
    }

    /** The only candidate, or the one primary among them; null when there is neither. */
    static @Nullable String uniqueOrPrimary(
            ConfigurableListableBeanFactory beans, List<String> candidates) {
        if (candidates.size() == 1) {
            return candidates.get(0);
        }
        String primary = null;
        for (String name : candidates) {
            if (beans.containsBeanDefinition(name) && beans.getBeanDefinition(name).isPrimary()) {
                if (primary != null) {
                    return null;
                }
                primary = name;
            }
        }
        return primary;
    }

    /** The first property set under {@code prefix} in any property source, or null. */
    private static @Nullable ConfigurationPropertyName firstUnder(
            Environment environment, String prefix) {
        ConfigurationPropertyName root = ConfigurationPropertyName.of(prefix);
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (source instanceof IterableConfigurationPropertySource iterable) {
                ConfigurationPropertyName found =
                        iterable.stream().filter(root::isAncestorOf).findFirst().orElse(null);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    static String typeName(ConfigurableListableBeanFactory beans, String name) {
        Class<?> type = beans.getType(name);
        return type == null ? "bean of unknown type" : type.getName();
    }

    private static ClassLoader loader() {
        ClassLoader l = NamedOutboxes.class.getClassLoader();
        return l != null ? l : ClassLoader.getSystemClassLoader();
    }

    @Override
    public String toString() {
        return "NamedOutboxes" + settings.keySet();
    }
}
