package io.brokerstream.streams.topology;

import io.brokerstream.avro.EquityStart;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.money.Micros;
import io.brokerstream.streams.domain.ReferenceData;
import io.brokerstream.streams.state.AccountEntry;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;

/** Reference data read from the global stores, as the order flow sees it at this moment. */
final class StoreReferenceData implements ReferenceData {
  private static final StringSerializer KEYS = new StringSerializer();

  private final TimestampedKeyValueStore<String, Member> members;
  private final KeyValueStore<String, AccountEntry> accounts;
  private final TimestampedKeyValueStore<String, Instrument> instruments;
  private final TimestampedKeyValueStore<String, EquityStart> equityStarts;
  private final TimestampedKeyValueStore<String, PriceTick> prices;

  StoreReferenceData(ProcessorContext<?, ?> context) {
    members = context.getStateStore(StoreNames.MEMBERS);
    accounts = context.getStateStore(StoreNames.ACCOUNTS);
    instruments = context.getStateStore(StoreNames.INSTRUMENTS);
    equityStarts = context.getStateStore(StoreNames.EQUITY_STARTS);
    prices = context.getStateStore(StoreNames.PRICES);
  }

  @Override
  public AccountEntry account(String accountId) {
    return accounts.get(StoreNames.accountKey(accountId));
  }

  @Override
  public Member member(String memberId) {
    return value(members.get(memberId));
  }

  @Override
  public Instrument instrument(String instrumentId) {
    return value(instruments.get(instrumentId));
  }

  @Override
  public Double volatility(String equityId) {
    EquityStart start = value(equityStarts.get(equityId));
    return start == null ? null : start.getVolatility();
  }

  @Override
  public Long priceMicros(String equityId) {
    PriceTick tick = value(prices.get(equityId));
    return tick == null ? null : Micros.of(tick.getPrice());
  }

  @Override
  public long depositedCash(String memberId) {
    long total = 0;
    try (KeyValueIterator<String, AccountEntry> it = accounts.prefixScan(StoreNames.memberIndexPrefix(memberId), KEYS)) {
      while (it.hasNext()) {
        KeyValue<String, AccountEntry> entry = it.next();
        total = Math.addExact(total, entry.value.cashMicros());
      }
    }
    return total;
  }

  private static <V> V value(ValueAndTimestamp<V> stored) {
    return stored == null ? null : stored.value();
  }
}
