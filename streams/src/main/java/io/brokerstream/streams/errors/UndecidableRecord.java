package io.brokerstream.streams.errors;

/**
 * A record the flow cannot decide anything from (no member in its key, an id that breaks the id
 * rule, a missing value). Thrown before any state is read or changed, so the processing handler can
 * dead-letter the record and the task go on. Its message never repeats more than a little of the
 * record.
 */
public final class UndecidableRecord extends RuntimeException {
  public UndecidableRecord(String message) {
    super(message, null, false, false);
  }
}
