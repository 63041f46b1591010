package io.brokerstream.streams.topology;

import io.brokerstream.avro.DeadLetter;

/**
 * Where a global store updater sends the dead letter of a reference record it refused (a
 * volatility, multiplier or strike no model can use, written around Postgres's checks). A global
 * store's updater cannot forward records into the flow's transactions, so the letter goes with a
 * producer of its own, at least once (a restart that reads the record again sends it again); the
 * record itself is never stored, and the store keeps what it held.
 */
@FunctionalInterface
public interface ReferenceLetters extends AutoCloseable {
  ReferenceLetters NONE = letter -> {};

  void send(DeadLetter letter);

  @Override
  default void close() {}
}
