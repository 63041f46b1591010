package io.brokerstream.baseline;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.money.Micros;
import io.brokerstream.pricing.OptionPricer;
import io.brokerstream.rules.BoundedLetters;
import io.brokerstream.rules.PriceBand;
import io.brokerstream.rules.TickRules;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RegistryUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the monolith's price threads: each tick of a poll is checked with the shared tick rules
 * against its instrument and the last accepted price (a refused one goes to dlq.ticks with its
 * fault); the latest accepted price per equity wins, is stored, and revalues every position in the
 * equity and in options on it, all in one Postgres transaction; then the offsets are committed. A
 * replay after a crash stores the same prices and marks again: the work is idempotent.
 */
final class PriceConsumer implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(PriceConsumer.class);
  private static final String INSTRUMENT =
      "SELECT i.instrument_id, i.symbol, i.currency, i.exchange, i.name, "
          + "i.instrument_type, i.status, i.multiplier, p.price, e.volatility, p.event_ts FROM instruments i "
          + "LEFT JOIN %s.mono_latest_prices p ON p.instrument_id = i.instrument_id "
          + "LEFT JOIN equity_starts e ON e.instrument_id = i.instrument_id WHERE i.instrument_id = ?";
  private static final String STORE =
      "INSERT INTO %s.mono_latest_prices AS l (instrument_id, price, event_ts, received_ts) "
          + "VALUES (?, ?, ?, ?) ON CONFLICT (instrument_id) DO UPDATE SET price = excluded.price, "
          + "event_ts = excluded.event_ts, received_ts = excluded.received_ts";

  private final int index;
  private final BaselineSettings settings;
  private final KafkaSetup kafka;
  private final Database db;
  private final TickRules rules;
  private final PriceBand band;

  /**
   * The halts of this thread's instruments (an instrument's ticks are in one partition, so one
   * thread). In memory: the monolith's halts do not outlive the thread; the order flow's do.
   */
  private final Map<String, PriceBand.Halt> halts = new HashMap<>();

  private final OptionPricer pricer;
  private final AvroCodec<PriceTick> ticks;
  private final AvroCodec<DeadLetter> letters;
  private final DeadLetterRecords undecodable;
  private final Counters counters;
  private final CountDownLatch assigned;
  private final AtomicBoolean signalled = new AtomicBoolean();
  private volatile boolean running = true;
  private volatile KafkaConsumer<byte[], byte[]> consumer;

  PriceConsumer(
      int index,
      BaselineSettings settings,
      KafkaSetup kafka,
      Database db,
      TickRules rules,
      PriceBand band,
      OptionPricer pricer,
      AvroCodec<PriceTick> ticks,
      AvroCodec<DeadLetter> letters,
      DeadLetterRecords undecodable,
      Counters counters,
      CountDownLatch assigned) {
    this.index = index;
    this.settings = settings;
    this.kafka = kafka;
    this.db = db;
    this.rules = rules;
    this.band = band;
    this.pricer = pricer;
    this.ticks = ticks;
    this.letters = letters;
    this.undecodable = undecodable;
    this.counters = counters;
    this.assigned = assigned;
  }

  /** An instrument as a tick needs it, with its last accepted price and volatility. */
  private record Known(
      Instrument instrument, Long lastPrice, Double volatility, Instant lastEventTs) {}

  @Override
  public void run() {
    while (running) {
      try (KafkaConsumer<byte[], byte[]> c =
              new KafkaConsumer<>(
                  kafka.consumer(
                      settings.get("groups.prices"), settings.getInt("prices.batch-size", 1)));
          KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(kafka.producer());
          Connection tx = db.connection();
          PreparedStatement lookup = tx.prepareStatement(INSTRUMENT.formatted(db.schema()));
          PreparedStatement store = tx.prepareStatement(STORE.formatted(db.schema()));
          Revaluation revaluation = new Revaluation(tx, db.schema(), pricer)) {
        consumer = c;
        tx.setAutoCommit(false);
        c.subscribe(
            List.of(settings.get("topics.ticks")),
            new ConsumerRebalanceListener() {
              @Override
              public void onPartitionsRevoked(java.util.Collection<TopicPartition> partitions) {}

              @Override
              public void onPartitionsAssigned(java.util.Collection<TopicPartition> partitions) {
                Starts.record(c, partitions);
                if (signalled.compareAndSet(false, true)) {
                  assigned.countDown();
                }
              }
            });
        while (running) {
          ConsumerRecords<byte[], byte[]> batch = c.poll(Duration.ofMillis(200));
          for (int attempt = 1; !batch.isEmpty(); attempt++) {
            try {
              handle(batch, c, producer, tx, lookup, store, revaluation);
              break;
            } catch (SQLException e) {
              // A deadlock or serialization failure rolled the batch back: run it again as it is.
              if (!Transient.is(e) || attempt == Transient.ATTEMPTS) {
                throw e;
              }
              counters.retries.incrementAndGet();
            }
          }
        }
      } catch (WakeupException e) {
        if (running) {
          counters.restarts.incrementAndGet();
        }
      } catch (Exception e) {
        if (!running) {
          break;
        }
        counters.restarts.incrementAndGet();
        LOG.warn(
            "price thread {} restarts from the last committed offsets after: {}",
            index,
            e.toString(),
            e);
        try {
          Thread.sleep(1000);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  private void handle(
      ConsumerRecords<byte[], byte[]> batch,
      KafkaConsumer<byte[], byte[]> c,
      KafkaProducer<byte[], byte[]> producer,
      Connection tx,
      PreparedStatement lookup,
      PreparedStatement store,
      Revaluation revaluation)
      throws SQLException {
    Instant now = Instant.now();
    List<ProducerRecord<byte[], byte[]>> refused = new ArrayList<>();
    Map<String, Known> known = new HashMap<>();
    Map<String, PriceTick> latest = new LinkedHashMap<>();
    long revalued = 0;
    long held = 0;
    try {
      for (ConsumerRecord<byte[], byte[]> in : batch) {
        if (in.value() == null) {
          continue; // a tombstone on a ticks topic means nothing
        }
        PriceTick tick;
        try {
          tick = ticks.decode(in.value());
        } catch (RegistryUnavailableException e) {
          throw e;
        } catch (RuntimeException e) {
          refused.add(undecodable.of(in, e));
          continue;
        }
        Known k = known.computeIfAbsent(tick.getInstrumentId(), id -> find(lookup, id));
        String key =
            in.key() == null ? null : new String(in.key(), java.nio.charset.StandardCharsets.UTF_8);
        TickRules.Rejection no =
            !tick.getInstrumentId().equals(key)
                ? new TickRules.Rejection(
                    TickRules.Fault.KEY_MISMATCH, "a tick is keyed by its instrument id")
                : rules.check(
                    tick,
                    k == null ? null : k.instrument(),
                    lastEventTs(k, halts.get(tick.getInstrumentId())),
                    now);
        if (no != null) {
          refused.add(refusal(in, tick, no, now));
          continue;
        }
        Instant taken = TickRules.takenAt(tick, now);
        PriceBand.Step step =
            band.onTick(
                Micros.of(tick.getPrice()),
                taken.toEpochMilli(),
                tick.getSequence(),
                k.lastPrice(),
                halts.get(tick.getInstrumentId()),
                now.toEpochMilli());
        if (step.halt() != null) {
          halts.put(tick.getInstrumentId(), step.halt()); // held: it prices nothing
          held++;
          continue;
        }
        halts.remove(tick.getInstrumentId());
        // a tick stamped ahead is used at the broker's time; its claim orders nothing after it
        known.put(
            tick.getInstrumentId(),
            new Known(
                k.instrument(),
                Micros.of(tick.getPrice()),
                k.volatility(),
                tick.getEventTs().isAfter(now) ? k.lastEventTs() : taken));
        latest.put(tick.getInstrumentId(), PriceTick.newBuilder(tick).setEventTs(taken).build());
      }
      for (PriceTick tick : latest.values()) {
        long price = Micros.of(tick.getPrice());
        store.setString(1, tick.getInstrumentId());
        store.setBigDecimal(2, tick.getPrice());
        store.setTimestamp(3, Timestamp.from(tick.getEventTs()));
        store.setTimestamp(4, Timestamp.from(now));
        store.addBatch();
        revalued +=
            revaluation.revalue(
                tick.getInstrumentId(), price, known.get(tick.getInstrumentId()).volatility(), now);
      }
      store.executeBatch();
      tx.commit();
    } catch (SQLException | RuntimeException e) {
      store.clearBatch();
      tx.rollback();
      throw e;
    }
    for (ProducerRecord<byte[], byte[]> r : refused) {
      producer.send(r);
    }
    producer.flush();
    c.commitSync();
    counters.ticksAccepted.addAndGet(batch.count() - refused.size() - held);
    counters.ticksHeld.addAndGet(held);
    counters.ticksRefused.addAndGet(refused.size());
    counters.positionsRevalued.addAndGet(revalued);
  }

  /** The later of the last accepted tick's and the last held tick's event time. */
  private static Instant lastEventTs(Known k, PriceBand.Halt halt) {
    Instant last = k == null ? null : k.lastEventTs();
    if (halt != null && halt.heldPrice() > 0) {
      Instant heldAt = Instant.ofEpochMilli(halt.heldEventMs());
      return last == null || heldAt.isAfter(last) ? heldAt : last;
    }
    return last;
  }

  private Known find(PreparedStatement lookup, String instrumentId) {
    try {
      lookup.setString(1, instrumentId);
      try (ResultSet r = lookup.executeQuery()) {
        if (!r.next()) {
          return null;
        }
        Instrument i =
            Instrument.newBuilder()
                .setInstrumentId(r.getString(1))
                .setSymbol(r.getString(2))
                .setCurrency(r.getString(3))
                .setExchange(r.getString(4))
                .setName(r.getString(5))
                .setInstrumentType(r.getString(6))
                .setStatus(r.getString(7))
                .setMultiplier(r.getInt(8))
                .build();
        java.math.BigDecimal last = r.getBigDecimal(9);
        double vol = r.getDouble(10);
        Double volatility = r.wasNull() ? null : vol;
        Timestamp lastEvent = r.getTimestamp(11);
        return new Known(
            i,
            last == null ? null : Micros.of(last),
            volatility,
            lastEvent == null ? null : lastEvent.toInstant());
      }
    } catch (SQLException e) {
      throw new IllegalStateException("instrument lookup failed: " + e.getMessage(), e);
    }
  }

  private ProducerRecord<byte[], byte[]> refusal(
      ConsumerRecord<byte[], byte[]> in, PriceTick tick, TickRules.Rejection no, Instant now) {
    String topic = settings.get("topics.tick-dead-letters");
    DeadLetter letter =
        BoundedLetters.letter(
            in.topic(),
            in.partition(),
            in.offset(),
            in.key(),
            in.value(),
            no.fault().name(),
            no.detail(),
            "baseline",
            now);
    byte[] key =
        in.key() == null || in.key().length <= 64
            ? in.key()
            : java.util.Arrays.copyOf(in.key(), 64);
    return new ProducerRecord<>(topic, key, letters.encode(topic + "-value", letter));
  }

  void stop() {
    running = false;
    KafkaConsumer<byte[], byte[]> c = consumer;
    if (c != null) {
      c.wakeup();
    }
  }
}
