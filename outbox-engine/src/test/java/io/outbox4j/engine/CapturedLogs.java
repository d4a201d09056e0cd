package io.outbox4j.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.AbstractLogger;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The engine tests' slf4j binding: every event at DEBUG and above is kept in memory for the tests
 * to read, and events at WARN and above are also written to standard error. Registered in {@code
 * META-INF/services/org.slf4j.spi.SLF4JServiceProvider}.
 */
public final class CapturedLogs implements SLF4JServiceProvider {
    /** One logged event, its message already formatted. */
    record Event(String logger, Level level, String message, Throwable error) {
        @Override
        public String toString() {
            return level + " " + logger + " - " + message;
        }
    }

    static final List<Event> EVENTS = new CopyOnWriteArrayList<>();

    /** The events of one logger whose message contains {@code text}. */
    static List<Event> of(String logger, String text) {
        return EVENTS.stream()
                .filter(e -> e.logger().equals(logger) && e.message().contains(text))
                .toList();
    }

    /** The messages the engine's store logger logged about the relay {@code owner}. */
    static List<String> storeLog(String owner) {
        return of("io.outbox4j.engine.store", "relay '" + owner + "'").stream()
                .map(Event::message)
                .toList();
    }

    /** Every event whose message contains {@code text}. */
    static List<Event> containing(String text) {
        return EVENTS.stream().filter(e -> e.message().contains(text)).toList();
    }

    private final ILoggerFactory factory = CapturingLogger::new;
    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new NOPMDCAdapter();

    /** Called by slf4j through the service loader. */
    public CapturedLogs() {}

    @Override
    public ILoggerFactory getLoggerFactory() {
        return factory;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {}

    private static final class CapturingLogger extends AbstractLogger {
        private static final long serialVersionUID = 1L;

        CapturingLogger(String name) {
            this.name = name;
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(
                Level level,
                Marker marker,
                String messagePattern,
                Object[] arguments,
                Throwable throwable) {
            String message = MessageFormatter.basicArrayFormat(messagePattern, arguments);
            EVENTS.add(new Event(name, level, message, throwable));
            if (level.toInt() >= Level.WARN.toInt()) {
                System.err.println(level + " " + name + " - " + message);
            }
        }

        @Override
        public boolean isTraceEnabled() {
            return false;
        }

        @Override
        public boolean isTraceEnabled(Marker marker) {
            return false;
        }

        @Override
        public boolean isDebugEnabled() {
            return true;
        }

        @Override
        public boolean isDebugEnabled(Marker marker) {
            return true;
        }

        @Override
        public boolean isInfoEnabled() {
            return true;
        }

        @Override
        public boolean isInfoEnabled(Marker marker) {
            return true;
        }

        @Override
        public boolean isWarnEnabled() {
            return true;
        }

        @Override
        public boolean isWarnEnabled(Marker marker) {
            return true;
        }

        @Override
        public boolean isErrorEnabled() {
            return true;
        }

        @Override
        public boolean isErrorEnabled(Marker marker) {
            return true;
        }
    }
}
