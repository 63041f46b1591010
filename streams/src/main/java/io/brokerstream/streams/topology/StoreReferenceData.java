package io.brokerstream.streams.topology;

import io.brokerstream.avro.EquityStart;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.AccountEntry;
import io.brokerstream.rules.ReferenceData;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.ProcessingContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Reference data from the global stores, as the order flow sees it at this moment, through the
 * shared cache of decoded values.
 */
final class StoreReferenceData implements ReferenceData {
  private static final StringSerializer KEYS = new StringSerializer();

  private final ReferenceCache cache;
  private final KeyValueStore<String, Member> members;
  private final KeyValueStore<String, AccountEntry> accounts;
  private final KeyValueStore<String, Instrument> instruments;
  private final KeyValueStore<String, EquityStart> equityStarts;
  private final KeyValueStore<String, PriceTick> prices;

  StoreReferenceData(ProcessingContext context, ReferenceCache cache) {
    this.cache = cache;
    members = context.getStateStore(StoreNames.MEMBERS);
    accounts = context.getStateStore(StoreNames.ACCOUNTS);
    instruments = context.getStateStore(StoreNames.INSTRUMENTS);
    equityStarts = context.getStateStore(StoreNames.EQUITY_STARTS);
    prices = context.getStateStore(StoreNames.PRICES);
  }

  @Override
  public AccountEntry account(String accountId) {
    return cache.get(StoreNames.ACCOUNTS, accountId, id -> accounts.get(StoreNames.accountKey(id)));
  }

  @Override
  public Member member(String memberId) {
    return cache.get(StoreNames.MEMBERS, memberId, members::get);
  }

  @Override
  public Instrument instrument(String instrumentId) {
    return cache.get(StoreNames.INSTRUMENTS, instrumentId, instruments::get);
  }

  @Override
  public Double volatility(String equityId) {
    return cache.get(
        StoreNames.EQUITY_STARTS,
        equityId,
        id -> {
          EquityStart start = equityStarts.get(id);
          return start == null ? null : start.getVolatility();
        });
  }

  @Override
  public Long priceMicros(String equityId) {
    return cache.get(
        StoreNames.PRICES,
        equityId,
        id -> {
          PriceTick tick = prices.get(id);
          return tick == null ? null : Micros.of(tick.getPrice());
        });
  }

  /**
   * The latest price record of an equity in prices.latest (one commit behind the ticks at most), or
   * null.
   */
  PriceTick latestTick(String equityId) {
    return prices.get(equityId);
  }

  @Override
  public long depositedCash(String memberId) {
    return cache.<Long>get(
        AccountsStoreUpdater.DEPOSITS,
        memberId,
        id -> {
          long total = 0;
          try (KeyValueIterator<String, AccountEntry> it =
              accounts.prefixScan(StoreNames.memberIndexPrefix(id), KEYS)) {
            while (it.hasNext()) {
              KeyValue<String, AccountEntry> entry = it.next();
              total = Math.addExact(total, entry.value.cashMicros());
            }
          }
          return total;
        });
  }
}
