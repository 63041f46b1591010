package io.brokerstream.streams.gateway;

import io.brokerstream.avro.ApiKey;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.InstrumentStatus;
import io.brokerstream.avro.Member;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.Position;
import io.brokerstream.avro.UnrealizedPnl;
import io.brokerstream.rules.AccountEntry;
import io.brokerstream.rules.RiskState;
import io.brokerstream.streams.state.BookedPosition;
import io.brokerstream.streams.state.OpenOrder;
import io.brokerstream.streams.topology.LocalResults;
import io.brokerstream.streams.topology.StoreNames;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/** Interactive queries: which instance holds a key, and the local answers. */
final class Queries {
  private static final Serializer<String> KEYS = Serdes.String().serializer();
  private final KafkaStreams streams;
  private final KeyLocations locations;
  private final HostInfo self;
  private final LocalResults local;
  private final ConcurrentHashMap<String, ReadOnlyKeyValueStore<String, ?>> globals =
      new ConcurrentHashMap<>();

  Queries(KafkaStreams streams, KeyLocations locations, HostInfo self, LocalResults local) {
    this.streams = streams;
    this.locations = locations;
    this.self = self;
    this.local = local;
  }

  HostInfo self() {
    return self;
  }

  /** The instance whose task owns `key` in `store` (member stores: the member id). */
  KeyQueryMetadata locate(String store, String key) {
    KeyQueryMetadata meta = locations.locate(store, key);
    if (!KeyLocations.usable(meta)) {
      throw new HttpError(503, "the order flow is rebalancing; try again shortly");
    }
    return meta;
  }

  boolean isLocal(KeyQueryMetadata meta) {
    return meta.activeHost().equals(self);
  }

  // Timestamped stores queried as plain key-value stores answer plain values.
  OrderResult result(KeyQueryMetadata meta, String orderId) {
    KeyValueStore<String, OrderResult> open = local.store(meta.partition());
    if (open != null) {
      try {
        return open.get(orderId);
      } catch (InvalidStateStoreException e) {
        // closing under this read (the task moves): ask Kafka Streams, which knows where it went
      }
    }
    return this.<OrderResult>partitionStore(StoreNames.ORDER_RESULTS, meta.partition())
        .get(orderId);
  }

  /** An account's positions by instrument; their cash, summed, is what its fills moved. */
  List<KeyValue<String, BookedPosition>> positions(KeyQueryMetadata meta, String accountId) {
    List<KeyValue<String, BookedPosition>> out = new ArrayList<>();
    ReadOnlyKeyValueStore<String, Position> store =
        partitionStore(StoreNames.POSITIONS, meta.partition());
    try (KeyValueIterator<String, Position> it = store.prefixScan(accountId + "|", KEYS)) {
      it.forEachRemaining(
          kv ->
              out.add(
                  new KeyValue<>(
                      kv.key.substring(accountId.length() + 1), BookedPosition.of(kv.value))));
    }
    return out;
  }

  /** The member's working orders (its task holds them under member|order id), in order id order. */
  List<OpenOrder> openOrders(KeyQueryMetadata meta, String memberId) {
    List<OpenOrder> out = new ArrayList<>();
    ReadOnlyKeyValueStore<String, OpenOrder> store =
        partitionStore(StoreNames.OPEN_ORDERS, meta.partition());
    try (KeyValueIterator<String, OpenOrder> it = store.prefixScan(memberId + "|", KEYS)) {
      it.forEachRemaining(kv -> out.add(kv.value));
    }
    return out;
  }

  RiskState risk(KeyQueryMetadata meta, String memberId) {
    RiskState r =
        this.<RiskState>partitionStore(StoreNames.MEMBER_RISK, meta.partition()).get(memberId);
    return r == null ? RiskState.NONE : r;
  }

  /** What the member's working orders hold of its buying power (micros). */
  long reserved(KeyQueryMetadata meta, String memberId) {
    Long r = this.<Long>partitionStore(StoreNames.MEMBER_RESERVED, meta.partition()).get(memberId);
    return r == null ? 0 : r;
  }

  long cashDelta(KeyQueryMetadata meta, String accountId) {
    return cashOf(positions(meta, accountId));
  }

  static long cashOf(List<KeyValue<String, BookedPosition>> positions) {
    long cash = 0;
    for (KeyValue<String, BookedPosition> kv : positions) {
      cash = Math.addExact(cash, kv.value.cash());
    }
    return cash;
  }

  AccountEntry account(String accountId) {
    return globalGet(StoreNames.ACCOUNTS, StoreNames.accountKey(accountId));
  }

  List<AccountEntry> accountsOf(String memberId) {
    List<AccountEntry> out = new ArrayList<>();
    try (KeyValueIterator<String, AccountEntry> it =
        this.<AccountEntry>globalStore(StoreNames.ACCOUNTS)
            .prefixScan(StoreNames.memberIndexPrefix(memberId), KEYS)) {
      it.forEachRemaining(kv -> out.add(kv.value));
    }
    return out;
  }

  Member member(String memberId) {
    return globalGet(StoreNames.MEMBERS, memberId);
  }

  /** The P&L flow's last word on the member's open positions (null: none yet). */
  UnrealizedPnl memberMarks(String memberId) {
    return globalGet(StoreNames.MEMBER_MARKS, memberId);
  }

  Instrument instrument(String instrumentId) {
    return globalGet(StoreNames.INSTRUMENTS, instrumentId);
  }

  /** Whether an equity trades (null: it never halted). */
  InstrumentStatus status(String equityId) {
    return globalGet(StoreNames.PRICE_STATUS, equityId);
  }

  ApiKey apiKey(String sha256) {
    return globalGet(StoreNames.API_KEYS, sha256);
  }

  // Every request reads two or three global stores; building the query wrapper each time showed in
  // the gateway's profile. A global store never migrates, so its wrapper is kept until it throws.
  @SuppressWarnings("unchecked")
  private <V> ReadOnlyKeyValueStore<String, V> globalStore(String name) {
    ReadOnlyKeyValueStore<String, ?> cached = globals.get(name);
    if (cached != null) {
      return (ReadOnlyKeyValueStore<String, V>) cached;
    }
    try {
      ReadOnlyKeyValueStore<String, V> store =
          streams.store(
              StoreQueryParameters.fromNameAndType(
                  name, QueryableStoreTypes.<String, V>keyValueStore()));
      globals.put(name, store);
      return store;
    } catch (InvalidStateStoreException e) {
      throw new HttpError(503, "reference data is loading; try again shortly");
    }
  }

  private <V> V globalGet(String name, String key) {
    try {
      return this.<V>globalStore(name).get(key);
    } catch (InvalidStateStoreException e) {
      globals.remove(name);
      throw new HttpError(503, "reference data is not readable right now; try again shortly");
    }
  }

  private <V> ReadOnlyKeyValueStore<String, V> partitionStore(String name, int partition) {
    try {
      return streams.store(
          StoreQueryParameters.fromNameAndType(name, QueryableStoreTypes.<String, V>keyValueStore())
              .withPartition(partition));
    } catch (InvalidStateStoreException e) {
      throw new HttpError(
          503, "store " + name + " is not ready on this instance; try again shortly");
    }
  }
}
