package io.brokerstream.pnl;

import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RestSchemaRegistry;
import io.brokerstream.serde.SchemaRegistry;
import java.io.Serializable;
import org.apache.avro.specific.SpecificRecord;

/**
 * An Avro codec made on the task from the registry's URL: the job graph ships the URL, not a
 * registry client. Never registers: the launcher registered (and checked) every schema before the
 * job started.
 */
final class TaskCodec<A extends SpecificRecord> implements Serializable {
  private static final long serialVersionUID = 1L;
  private final String registryUrl;
  private final Class<A> type;
  private transient AvroCodec<A> codec;

  TaskCodec(String registryUrl, Class<A> type) {
    this.registryUrl = registryUrl;
    this.type = type;
  }

  /** For tests: a registry of their own. */
  void useRegistry(SchemaRegistry registry) {
    codec = AvroCodec.specific(type, registry, false);
  }

  AvroCodec<A> get() {
    if (codec == null) {
      codec = AvroCodec.specific(type, new RestSchemaRegistry(registryUrl), false);
    }
    return codec;
  }
}
