package io.brokerstream.serde;

import org.apache.avro.Schema;

/**
 * The two things the Confluent wire format needs from a schema registry: the id of a schema under a
 * subject (registering it when allowed), and the schema behind an id. Implementations cache both.
 */
public interface SchemaRegistry {

  /** The id of {@code schema} under {@code subject}; registers it first if it is new there. */
  int register(String subject, Schema schema);

  /**
   * The id of {@code schema} if it is already registered under {@code subject}; never registers.
   */
  int lookup(String subject, Schema schema);

  /** The schema with this id (the writer schema of a record that carries the id). */
  Schema schemaById(int id);
}
