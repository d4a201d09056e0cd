package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.console.OutboxConsole;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/** The console's servlet: routing of named outboxes, the operator, Spring Security's CSRF field. */
class ConsoleServletTest {
    /** What Spring Security's CsrfToken offers, by name. */
    public static final class FakeCsrfToken {
        public String getParameterName() {
            return "_csrf";
        }

        public String getToken() {
            return "spring-token-1";
        }
    }

    private static MockHttpServletResponse get(ConsoleServlet servlet, String pathInfo, String user)
            throws Exception {
        MockHttpServletRequest req =
                new MockHttpServletRequest("GET", "/actuator/outbox-console" + pathInfo);
        req.setServletPath("/actuator/outbox-console");
        req.setPathInfo(pathInfo.isEmpty() ? null : pathInfo);
        req.setRemoteUser(user);
        req.setAttribute(ConsoleServlet.SPRING_CSRF, new FakeCsrfToken());
        MockHttpServletResponse resp = new MockHttpServletResponse();
        servlet.service(req, resp);
        return resp;
    }

    @Test
    void namedOutboxesHaveAConsoleEach_andAnIndex() throws Exception {
        Map<String, OutboxConsole> consoles = new LinkedHashMap<>();
        consoles.put(
                "orders",
                OutboxConsole.builder(new InMemoryOutboxStore()).title("outbox orders").build());
        consoles.put(
                "billing",
                OutboxConsole.builder(new InMemoryOutboxStore()).title("outbox billing").build());
        ConsoleServlet servlet = new ConsoleServlet(consoles, true);

        MockHttpServletResponse index = get(servlet, "/", "ann");
        assertThat(index.getStatus()).isEqualTo(200);
        assertThat(index.getContentAsString())
                .contains("href=\"/actuator/outbox-console/orders/\"")
                .contains("href=\"/actuator/outbox-console/billing/\"");
        MockHttpServletResponse billing = get(servlet, "/billing/", "ann");
        assertThat(billing.getStatus()).isEqualTo(200);
        assertThat(billing.getContentAsString())
                .contains("outbox billing")
                .contains("href=\"/actuator/outbox-console/billing/dead-letters\"");
        assertThat(get(servlet, "/nothing/", "ann").getStatus()).isEqualTo(404);
    }

    @Test
    void theFormsCarrySpringSecuritysTokenForTheAuthenticatedOperator() throws Exception {
        ConsoleServlet servlet =
                new ConsoleServlet(
                        Map.of(
                                "",
                                OutboxConsole.builder(new InMemoryOutboxStore())
                                        .hostAuthentication()
                                        .writeEnabled(true)
                                        .build()),
                        true);
        assertThat(get(servlet, "/dead-letters", "ann").getContentAsString())
                .contains("name=\"_csrf\" value=\"spring-token-1\"")
                .contains("Replay selected");
        assertThat(get(servlet, "/dead-letters", null).getContentAsString())
                .doesNotContain("Replay selected");
        assertThat(get(servlet, "", "ann").getHeader("Location"))
                .isEqualTo("/actuator/outbox-console/");
    }
}
