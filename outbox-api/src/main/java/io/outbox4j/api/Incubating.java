package io.outbox4j.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks API that is new and may still change, incompatibly, before 1.0 (CHANGELOG.md, "API
 * stability"). Everything else public in outbox4j's published modules is meant to stay; a change to
 * it gets a deprecation first. Applications may use incubating API, and should read the CHANGELOG's
 * "Upgrading" section when they move to a new version.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({
    ElementType.TYPE,
    ElementType.METHOD,
    ElementType.CONSTRUCTOR,
    ElementType.FIELD,
    ElementType.PACKAGE
})
public @interface Incubating {}
