package io.brokerstream.streams.topology;

import io.brokerstream.rules.BoundedLetters;
import io.brokerstream.rules.Identifiers;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.function.Function;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a global store as its topic says (a null value deletes) and drops the key from the cache. A
 * key that is not an id by the one id rule (Postgres refuses such ids; this guards a record written
 * around it) is skipped with a warning: ids are joined with '|' in the flow's keys and scanned by
 * prefix.
 *
 * <p>A value no model can use ({@code check} names its problem: a NaN or absurd volatility, a
 * multiplier or strike out of bounds) is refused: it is not stored, the store keeps what it held,
 * and its dead letter goes to dlq.streams with the cause ({@link ReferenceLetters}).
 */
final class GlobalStoreUpdater<V> implements Processor<String, V, Void, Void> {
  private static final Logger log = LoggerFactory.getLogger(GlobalStoreUpdater.class);
  private final String storeName;
  private final ReferenceCache cache;
  private final Function<V, String> check;
  private final ReferenceLetters letters;
  private final String application;
  private ProcessorContext<Void, Void> context;
  private KeyValueStore<String, V> store;

  GlobalStoreUpdater(String storeName, ReferenceCache cache) {
    this(storeName, cache, v -> null, ReferenceLetters.NONE, "");
  }

  GlobalStoreUpdater(
      String storeName,
      ReferenceCache cache,
      Function<V, String> check,
      ReferenceLetters letters,
      String application) {
    this.storeName = storeName;
    this.cache = cache;
    this.check = check;
    this.letters = letters;
    this.application = application;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    store = context.getStateStore(storeName);
  }

  @Override
  public void process(Record<String, V> record) {
    if (!Identifiers.isId(record.key())) {
      log.warn(
          "{}: skipped a record whose key is not an id ({})",
          storeName,
          Identifiers.problem(record.key(), Identifiers.MAX_ID));
      return;
    }
    String problem = record.value() == null ? null : check.apply(record.value());
    if (problem != null) {
      log.warn("{}: refused {} and kept what the store held: {}", storeName, record.key(), problem);
      RecordMetadata from = context.recordMetadata().orElse(null);
      letters.send(
          BoundedLetters.letter(
              from == null ? storeName : from.topic(),
              from == null ? -1 : from.partition(),
              from == null ? -1 : from.offset(),
              record.key().getBytes(StandardCharsets.UTF_8),
              null,
              "INVALID_REFERENCE_DATA",
              problem,
              application,
              Instant.ofEpochMilli(context.currentSystemTimeMs())));
      return;
    }
    if (record.value() == null) {
      store.delete(record.key());
    } else {
      store.put(record.key(), record.value());
    }
    cache.invalidate(storeName, record.key());
  }
}
