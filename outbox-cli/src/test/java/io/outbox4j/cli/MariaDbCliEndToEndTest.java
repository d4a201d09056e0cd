package io.outbox4j.cli;

import io.outbox4j.testservices.MariaDbServer;

class MariaDbCliEndToEndTest extends CliEndToEndTest {
    @Override
    String createDatabase(String name) {
        return MariaDbServer.shared().createDatabase(name);
    }

    @Override
    String user() {
        return MariaDbServer.shared().user();
    }

    @Override
    String password() {
        return MariaDbServer.shared().password();
    }
}
