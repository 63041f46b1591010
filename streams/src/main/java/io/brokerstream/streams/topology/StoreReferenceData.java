package io.brokerstream.streams.topology;

import io.brokerstream.avro.EquityStart;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.InstrumentStatus;
import io.brokerstream.avro.Member;
import io.brokerstream.avro.PnlScope;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.avro.UnrealizedPnl;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.AccountEntry;
import io.brokerstream.rules.MemberMarks;
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
  private final KeyValueStore<String, InstrumentStatus> statuses;
  private final KeyValueStore<String, UnrealizedPnl> marks;

  /** The latest price of an equity and its event time, decoded once per tick. */
  private record Quote(long micros, long eventMs) {}

  /** What the status cache holds for an equity that trades (a miss would read the store). */
  private static final String TRADING = "";

  StoreReferenceData(ProcessingContext context, ReferenceCache cache) {
    this.cache = cache;
    members = context.getStateStore(StoreNames.MEMBERS);
    accounts = context.getStateStore(StoreNames.ACCOUNTS);
    instruments = context.getStateStore(StoreNames.INSTRUMENTS);
    equityStarts = context.getStateStore(StoreNames.EQUITY_STARTS);
    prices = context.getStateStore(StoreNames.PRICES);
    statuses = context.getStateStore(StoreNames.PRICE_STATUS);
    marks = context.getStateStore(StoreNames.MEMBER_MARKS);
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
    Quote q = quote(equityId);
    return q == null ? null : q.micros();
  }

  @Override
  public Long priceTimeMs(String equityId) {
    Quote q = quote(equityId);
    return q == null ? null : q.eventMs();
  }

  private Quote quote(String equityId) {
    return cache.get(
        StoreNames.PRICES,
        equityId,
        id -> {
          PriceTick tick = prices.get(id);
          return tick == null
              ? null
              : new Quote(Micros.of(tick.getPrice()), tick.getEventTs().toEpochMilli());
        });
  }

  @Override
  public String halt(String equityId) {
    String halt =
        cache.get(
            StoreNames.PRICE_STATUS,
            equityId,
            id -> {
              InstrumentStatus s = statuses.get(id);
              return s == null || !"HALTED".equals(s.getState())
                  ? TRADING
                  : "since "
                      + s.getSinceTs()
                      + " ("
                      + s.getReason()
                      + (s.getDetail() == null ? "" : ": " + s.getDetail())
                      + ")";
            });
    return halt == null || halt.isEmpty() ? null : halt;
  }

  @Override
  public MemberMarks marks(String memberId) {
    return cache.get(
        StoreNames.MEMBER_MARKS,
        memberId,
        id -> {
          UnrealizedPnl m = marks.get(id);
          return m == null || m.getScope() != PnlScope.MEMBER
              ? null
              : new MemberMarks(
                  Math.min(0, Micros.of(m.getUnrealizedLoss())),
                  m.getPositions(),
                  m.getComputedTs().toEpochMilli());
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
