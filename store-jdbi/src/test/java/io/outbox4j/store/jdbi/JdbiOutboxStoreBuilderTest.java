package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.MessageLimits;
import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import java.util.List;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What the builder refuses, and the DDL it derives for a table name; no database needed. */
class JdbiOutboxStoreBuilderTest {
    private final Jdbi unused = Jdbi.create("jdbc:h2:mem:builder");

    @ParameterizedTest
    @ValueSource(
            strings = {
                "x;drop table users",
                "",
                "1outbox",
                "outbox-message",
                "out box",
                "\"outbox\"",
                "outbox_message_with_a_name_that_is_sixty_four_characters_long_xx"
            })
    void badTableName_isRefusedAtBuild_namingThePattern(String name) {
        assertThatThrownBy(() -> JdbiOutboxStore.builder(unused).tableName(name))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "tableName must match [A-Za-z_][A-Za-z0-9_]{0,62}, but was '" + name + "'");
    }

    @Test
    void nullArguments_areRefusedNamingTheField() {
        assertThatThrownBy(() -> JdbiOutboxStore.builder(null)).hasMessage("jdbi must not be null");
        assertThatThrownBy(() -> JdbiOutboxStore.builder(unused).tableName(null))
                .hasMessage("tableName must match [A-Za-z_][A-Za-z0-9_]{0,62}, but was null");
        assertThatThrownBy(() -> JdbiOutboxStore.builder(unused).dialect(null))
                .hasMessage("dialect must not be null");
        assertThatThrownBy(() -> JdbiOutboxStore.builder(unused).limits(null))
                .hasMessage("limits must not be null");
    }

    @Test
    void limitsBeyondTheColumns_areRefused() {
        MessageLimits d = MessageLimits.DEFAULTS;
        MessageLimits longIds =
                new MessageLimits(
                        256,
                        d.maxTopicLength(),
                        d.maxKeyLength(),
                        d.maxModuleLength(),
                        d.maxPayloadBytes(),
                        d.maxHeaders(),
                        d.maxHeaderNameLength(),
                        d.maxHeaderValueLength());
        assertThatThrownBy(() -> JdbiOutboxStore.builder(unused).limits(longIds))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "limits.maxIdLength must be <= 255 (the id column holds 255 characters), but was 256");
    }

    @Test
    void aGivenDialect_needsNoConnection() {
        JdbiOutboxStore store =
                JdbiOutboxStore.builder(Jdbi.create("jdbc:postgresql://127.0.0.1:1/none"))
                        .dialect(Dialect.POSTGRESQL)
                        .tableName("Events")
                        .build();
        assertThat(store.dialect()).isEqualTo(Dialect.POSTGRESQL);
        assertThat(store.tableName()).isEqualTo("Events");
        assertThat(store.sql().table).isEqualTo("\"Events\"");
        assertThat(store.deadLettersBlockTheirKey()).isTrue();
        assertThat(store).hasToString("JdbiOutboxStore[dialect=POSTGRESQL, table=Events]");
    }

    @Test
    void ddl_isRenamedForTheTable_includingIndexConstraintAndLockTableNames() {
        List<String> ddl = Schema.statements(Dialect.POSTGRESQL, "Events");
        assertThat(ddl).hasSize(10);
        assertThat(ddl)
                .anySatisfy(
                        s ->
                                assertThat(s)
                                        .startsWith(
                                                "ALTER TABLE \"Events\" ADD COLUMN IF NOT EXISTS bucket"))
                .anySatisfy(
                        s ->
                                assertThat(s)
                                        .contains("CREATE TABLE IF NOT EXISTS \"Events_members\""))
                .anySatisfy(
                        s ->
                                assertThat(s)
                                        .contains("CREATE TABLE IF NOT EXISTS \"Events_buckets\""))
                .anySatisfy(
                        s ->
                                assertThat(s)
                                        .contains(
                                                "\"Events_buckets_owner_idx\" ON \"Events_buckets\""))
                .anySatisfy(
                        s ->
                                assertThat(s)
                                        .startsWith(
                                                "INSERT INTO \"Events_buckets\" (bucket) SELECT"));
        assertThat(ddl.get(0))
                .startsWith("CREATE TABLE IF NOT EXISTS \"Events\" (")
                .contains("CONSTRAINT \"Events_pkey\" PRIMARY KEY (id)")
                .doesNotContain("outbox_message");
        assertThat(ddl.get(2))
                .isEqualTo(
                        "CREATE INDEX IF NOT EXISTS \"Events_claim_idx\" ON \"Events\""
                                + " (available_at, seq) WHERE dead_at IS NULL AND NOT parked");
        assertThat(Schema.statements(Dialect.MARIADB, "ev"))
                .anySatisfy(s -> assertThat(s).contains("CREATE TABLE IF NOT EXISTS `ev` ("))
                .anySatisfy(s -> assertThat(s).contains("KEY `ev_claim_idx`"))
                .anySatisfy(s -> assertThat(s).contains("CREATE TABLE IF NOT EXISTS `ev_lock`"))
                .anySatisfy(s -> assertThat(s).contains("CREATE TABLE IF NOT EXISTS `ev_members`"))
                .anySatisfy(s -> assertThat(s).startsWith("INSERT IGNORE INTO `ev_buckets`"))
                .anySatisfy(
                        s ->
                                assertThat(s)
                                        .isEqualTo(
                                                "INSERT IGNORE INTO `ev_lock` (name) VALUES ('claim'), ('members')"))
                .allSatisfy(s -> assertThat(s).doesNotContain("outbox_message"));
        assertThat(Schema.statements(Dialect.H2, "ev"))
                .anySatisfy(s -> assertThat(s).contains("CREATE TABLE IF NOT EXISTS \"ev_lock\""))
                .allSatisfy(s -> assertThat(s).doesNotContain("outbox_message"));
    }

    @Test
    void derivedNames_stayWithinSixtyThreeCharacters_andDistinct() {
        String a = "a".repeat(60) + "_x1";
        String b = "a".repeat(60) + "_x2";
        assertThat(Schema.objectName(a, "_claim_idx"))
                .hasSize(63)
                .endsWith("_claim_idx")
                .isNotEqualTo(Schema.objectName(b, "_claim_idx"));
        assertThat(Schema.objectName("short", "_claim_idx")).isEqualTo("short_claim_idx");
    }

    @Test
    void ddlResources_areOnTheClasspathUnderTheirDocumentedNames() {
        for (Dialect d : Dialect.values()) {
            assertThat(getClass().getClassLoader().getResource(d.ddlResource()))
                    .as(d.ddlResource())
                    .isNotNull();
        }
        assertThat(Dialect.POSTGRESQL.ddlResource())
                .isEqualTo("io/outbox4j/store/jdbi/postgresql.sql");
    }
}
