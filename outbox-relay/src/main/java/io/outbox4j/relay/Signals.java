package io.outbox4j.relay;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;

/**
 * Handles SIGTERM and SIGINT with the JDK's {@code sun.misc.Signal} (module {@code
 * jdk.unsupported}, reached by reflection so the build needs no internal API): the relay drains and
 * the process exits 0, where a shutdown hook would end with 143. Where the handler cannot be
 * installed (for example under {@code -Xrs}), the caller falls back to a shutdown hook.
 */
final class Signals {
    private Signals() {}

    /**
     * Runs {@code action} on the JVM's signal thread whenever the named signal arrives.
     *
     * @return whether the handler was installed
     */
    static boolean handle(String name, Runnable action) {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Object signal = signalClass.getConstructor(String.class).newInstance(name);
            InvocationHandler h =
                    (proxy, method, args) -> {
                        return switch (method.getName()) {
                            case "handle" -> {
                                action.run();
                                yield null;
                            }
                            case "hashCode" -> System.identityHashCode(proxy);
                            case "equals" -> args != null && proxy == args[0];
                            default -> "outbox4j relay " + name + " handler";
                        };
                    };
            Object handler =
                    Proxy.newProxyInstance(
                            handlerClass.getClassLoader(), new Class<?>[] {handlerClass}, h);
            signalClass
                    .getMethod("handle", signalClass, handlerClass)
                    .invoke(null, signal, handler);
            return true;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return false;
        }
    }
}
