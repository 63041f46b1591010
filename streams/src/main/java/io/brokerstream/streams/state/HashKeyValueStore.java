package io.brokerstream.streams.state;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;

/**
 * An in-memory key-value store for point lookups: a hash map for the values, and a sorted set of
 * the keys for range and prefix scans. Kafka Streams' own in-memory store keeps everything in a
 * tree, so every get compares byte arrays down a tree; with hundreds of thousands of positions that
 * was a fifth of the order flow's time. Updates to existing keys (most writes) touch only the map.
 *
 * <p>A store read by key alone ({@link #pointLookups}) keeps no sorted set: a store whose keys are
 * new with every order (the results not read back yet: each order's key is added, then removed
 * about a commit later) would otherwise insert into and remove from a sorted set of its keys per
 * order, 4 % of the streams process in a drain. It iterates in no order and refuses range and
 * prefix scans.
 *
 * <p>Like the built-in in-memory store it is restored from its changelog and safe for interactive
 * queries from other threads.
 */
public final class HashKeyValueStore implements KeyValueStore<Bytes, byte[]> {
  private final String name;
  private final Map<Bytes, byte[]> values = new ConcurrentHashMap<>();
  private final NavigableSet<Bytes> keys; // null: point lookups only
  private final Position position = Position.emptyPosition();
  private volatile boolean open;
  private StateStoreContext context;

  public HashKeyValueStore(String name) {
    this(name, true);
  }

  private HashKeyValueStore(String name, boolean ordered) {
    this.name = name;
    this.keys = ordered ? new ConcurrentSkipListSet<>() : null;
  }

  /** A store whose keys are also kept sorted, for range and prefix scans. */
  public static KeyValueBytesStoreSupplier supplier(String name) {
    return supplier(name, true);
  }

  /** A store read by key alone: {@link #all} in no order, no range or prefix scans. */
  public static KeyValueBytesStoreSupplier pointLookups(String name) {
    return supplier(name, false);
  }

  private static KeyValueBytesStoreSupplier supplier(String name, boolean ordered) {
    return new KeyValueBytesStoreSupplier() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public KeyValueStore<Bytes, byte[]> get() {
        return new HashKeyValueStore(name, ordered);
      }

      @Override
      public String metricsScope() {
        return "in-memory-hash";
      }
    };
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public void init(StateStoreContext context, StateStore root) {
    this.context = context;
    context.register(
        root,
        (key, value) -> {
          if (value == null) {
            delete(Bytes.wrap(key));
          } else {
            put(Bytes.wrap(key), value);
          }
        });
    open = true;
  }

  @Override
  public boolean persistent() {
    return false;
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public void flush() {}

  @Override
  public void close() {
    values.clear();
    if (keys != null) {
      keys.clear();
    }
    open = false;
  }

  @Override
  public Position getPosition() {
    return position;
  }

  @Override
  public <R> QueryResult<R> query(Query<R> query, PositionBound bound, QueryConfig config) {
    return StoreQueryUtils.handleBasicQueries(query, bound, config, this, position, context);
  }

  @Override
  public byte[] get(Bytes key) {
    return values.get(key);
  }

  @Override
  public void put(Bytes key, byte[] value) {
    if (value == null) {
      delete(key);
      return;
    }
    if (values.put(key, value) == null && keys != null) {
      keys.add(key);
    }
    track();
  }

  @Override
  public byte[] putIfAbsent(Bytes key, byte[] value) {
    byte[] existing = values.get(key);
    if (existing == null && value != null) {
      put(key, value);
    }
    return existing;
  }

  @Override
  public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
    entries.forEach(e -> put(e.key, e.value));
  }

  @Override
  public byte[] delete(Bytes key) {
    byte[] old = values.remove(key);
    if (old != null && keys != null) {
      keys.remove(key);
    }
    track();
    return old;
  }

  private void track() {
    if (context != null && context.recordMetadata().isPresent()) {
      var meta = context.recordMetadata().get();
      // A punctuation's writes (a DAY order's expiry) have no input record: nothing to track, as in
      // Kafka's stores.
      if (meta.topic() != null) {
        position.withComponent(meta.topic(), meta.partition(), meta.offset());
      }
    }
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
    return over(bounded(from, to).iterator());
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
    return over(bounded(from, to).descendingIterator());
  }

  /** Sorted by key bytes, or in no order in a store of point lookups (as Kafka allows). */
  @Override
  public KeyValueIterator<Bytes, byte[]> all() {
    return over(keys != null ? keys.iterator() : values.keySet().iterator());
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> reverseAll() {
    return over(sorted().descendingIterator());
  }

  @Override
  public <PS extends org.apache.kafka.common.serialization.Serializer<P>, P>
      KeyValueIterator<Bytes, byte[]> prefixScan(P prefix, PS serializer) {
    Bytes from = Bytes.wrap(serializer.serialize(null, prefix));
    Bytes to = Bytes.increment(from);
    return over(sorted().subSet(from, true, to, false).iterator());
  }

  @Override
  public long approximateNumEntries() {
    return values.size();
  }

  private NavigableSet<Bytes> sorted() {
    if (keys == null) {
      throw new UnsupportedOperationException(
          "store " + name + " is read by key alone: it keeps no sorted keys to scan");
    }
    return keys;
  }

  private NavigableSet<Bytes> bounded(Bytes from, Bytes to) {
    NavigableSet<Bytes> all = sorted();
    if (from == null && to == null) {
      return all;
    }
    if (from == null) {
      return all.headSet(to, true);
    }
    if (to == null) {
      return all.tailSet(from, true);
    }
    return from.compareTo(to) > 0
        ? new ConcurrentSkipListSet<>()
        : all.subSet(from, true, to, true);
  }

  /**
   * Iterates keys, skipping those removed since (the key set and the map are updated one after the
   * other).
   */
  private KeyValueIterator<Bytes, byte[]> over(Iterator<Bytes> it) {
    return new KeyValueIterator<>() {
      private KeyValue<Bytes, byte[]> next = advance();

      private KeyValue<Bytes, byte[]> advance() {
        while (it.hasNext()) {
          Bytes key = it.next();
          byte[] value = values.get(key);
          if (value != null) {
            return new KeyValue<>(key, value);
          }
        }
        return null;
      }

      @Override
      public boolean hasNext() {
        return next != null;
      }

      @Override
      public KeyValue<Bytes, byte[]> next() {
        if (next == null) {
          throw new NoSuchElementException();
        }
        KeyValue<Bytes, byte[]> current = next;
        next = advance();
        return current;
      }

      @Override
      public Bytes peekNextKey() {
        if (next == null) {
          throw new NoSuchElementException();
        }
        return next.key;
      }

      @Override
      public void close() {}
    };
  }
}
