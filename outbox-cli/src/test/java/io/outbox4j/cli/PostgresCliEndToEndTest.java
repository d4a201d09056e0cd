package io.outbox4j.cli;

import io.outbox4j.testservices.PostgresServer;

class PostgresCliEndToEndTest extends CliEndToEndTest {
    @Override
    String createDatabase(String name) {
        return PostgresServer.shared().createDatabase(name);
    }

    @Override
    String user() {
        return PostgresServer.shared().user();
    }

    @Override
    String password() {
        return PostgresServer.shared().password();
    }
}
