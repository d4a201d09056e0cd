package io.outbox4j.cli;

import io.outbox4j.testservices.DatabaseServer;
import io.outbox4j.testservices.PostgresServer;

class PostgresCliEndToEndTest extends CliEndToEndTest {
    @Override
    DatabaseServer server() {
        return PostgresServer.shared();
    }
}
