/**
 * Canary leak tests (issue 20): a secret in payloads and header values never reaches logs or
 * errors.
 */
package io.outbox4j.leaktests;
