package io.brokerstream.serde;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;

/**
 * A registry held in memory, for tests that run a topology without servers (TopologyTestDriver).
 * Ids are assigned per distinct schema, as a real registry assigns content ids.
 */
public final class InMemorySchemaRegistry implements SchemaRegistry {
  private final List<Schema> byId = new ArrayList<>();
  private final Map<Schema, Integer> ids = new HashMap<>();
  private final Map<String, List<Schema>> subjects = new HashMap<>();

  @Override
  public synchronized int register(String subject, Schema schema) {
    int id =
        ids.computeIfAbsent(
            schema,
            s -> {
              byId.add(s);
              return byId.size();
            });
    List<Schema> versions = subjects.computeIfAbsent(subject, s -> new ArrayList<>());
    if (!versions.contains(schema)) {
      versions.add(schema);
    }
    return id;
  }

  @Override
  public synchronized int lookup(String subject, Schema schema) {
    List<Schema> versions = subjects.get(subject);
    if (versions == null || !versions.contains(schema)) {
      throw new SerdeException("schema not registered under subject " + subject);
    }
    return ids.get(schema);
  }

  @Override
  public synchronized Schema schemaById(int id) {
    if (id < 1 || id > byId.size()) {
      throw new SerdeException("unknown schema id " + id);
    }
    return byId.get(id - 1);
  }

  public synchronized List<String> subjects() {
    return new ArrayList<>(subjects.keySet());
  }
}
