package io.outbox4j.cli;

import io.outbox4j.testservices.DatabaseServer;
import io.outbox4j.testservices.MariaDbServer;

class MariaDbCliEndToEndTest extends CliEndToEndTest {
    @Override
    DatabaseServer server() {
        return MariaDbServer.shared();
    }
}
