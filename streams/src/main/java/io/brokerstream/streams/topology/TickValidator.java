package io.brokerstream.streams.topology;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.InstrumentStatus;
import io.brokerstream.avro.PriceControl;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.BoundedLetters;
import io.brokerstream.rules.Identifiers;
import io.brokerstream.rules.PriceBand;
import io.brokerstream.rules.TickRules;
import io.brokerstream.serde.AvroCodec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Checks each raw tick, then decides whether its price may be used; applies operators' halts and
 * resumptions. A tick that breaks a rule of its own ({@link TickRules}) becomes a dead letter
 * naming its fault. A tick that passes is accepted, or held while its instrument is halted ({@link
 * PriceBand}): a tick far from the last accepted price halts the instrument, the feed's agreeing
 * ticks or an operator end the halt. Each halt and resumption is announced on prices.status. Every
 * tick is counted: ticks in = accepted + held + dead-lettered.
 *
 * <p>The last accepted tick is this task's own (it validates every tick of its partitions, in
 * order) or, for an instrument it has not seen since it started, prices.latest's; a halt is in the
 * task's changelogged store, so it outlives a restart. The event time kept for a tick is never
 * later than the broker's clock when it arrived ({@link TickRules#takenAt}), and that is the time
 * the accepted tick carries on: a tick stamped ahead cannot make the real ticks after it look old,
 * nor its price look fresher than it is. A tick keyed by anything but its own instrument id is
 * refused (KEY_MISMATCH): the fold and prices.latest are keyed by the record's key.
 */
final class TickValidator
    implements FixedKeyProcessor<String, SpecificRecord, TickValidator.Checked> {
  /** An accepted tick, the dead letter of a refused one, or a change of an instrument's status. */
  record Checked(PriceTick tick, DeadLetter refused, InstrumentStatus status) {}

  static final String FEED = "feed";

  private final TickRules rules;
  private final PriceBand band;
  private final ReferenceCache cache;
  private final AvroCodec<PriceTick> tickCodec;
  private final AvroCodec<PriceControl> controlCodec;
  private final String application;

  /**
   * The last tick this task accepted per instrument: bounded by the instruments, as only known ones
   * pass.
   */
  private final Map<String, PriceTick> accepted = new HashMap<>();

  /**
   * The event time the next tick of an instrument is ordered against: the latest event time of a
   * tick that passed (accepted or held) and did not claim to be from the future.
   */
  private final Map<String, Instant> orderedAt = new HashMap<>();

  private FixedKeyProcessorContext<String, Checked> context;
  private StoreReferenceData ref;
  private KeyValueStore<String, PriceBand.Halt> halts;
  private Sensor held;

  TickValidator(
      TickRules rules,
      PriceBand band,
      ReferenceCache cache,
      AvroCodec<PriceTick> tickCodec,
      AvroCodec<PriceControl> controlCodec,
      String application) {
    this.rules = rules;
    this.band = band;
    this.cache = cache;
    this.tickCodec = tickCodec;
    this.controlCodec = controlCodec;
    this.application = application;
  }

  @Override
  public void init(FixedKeyProcessorContext<String, Checked> context) {
    this.context = context;
    this.ref = new StoreReferenceData(context, cache);
    this.halts = context.getStateStore(StoreNames.PRICE_HALTS);
    // ticks in = accepted + held + dead-lettered: the held ones are counted here
    this.held =
        context
            .metrics()
            .addRateTotalSensor(
                "brokerstream-ticks",
                "task",
                "ticks-held",
                Sensor.RecordingLevel.INFO,
                "task-id",
                context.taskId().toString());
  }

  @Override
  public void process(FixedKeyRecord<String, SpecificRecord> record) {
    Instant now = Instant.ofEpochMilli(context.currentSystemTimeMs());
    if (record.value() instanceof PriceTick tick) {
      tick(record, tick, now);
    } else if (record.value() instanceof PriceControl control) {
      control(record, control, now);
    }
    // a tombstone on a ticks or controls topic means nothing
  }

  private void tick(FixedKeyRecord<String, SpecificRecord> record, PriceTick tick, Instant now) {
    String id = tick.getInstrumentId();
    if (!id.equals(record.key())) {
      refuse(
          record,
          tickCodec.encode(topic() + "-value", tick),
          TickRules.Fault.KEY_MISMATCH.name(),
          "a tick is keyed by its instrument id; this one's key is not "
              + BoundedLetters.clip(id, 64),
          now);
      return;
    }
    PriceTick last = lastAccepted(id);
    PriceBand.Halt halt = halts.get(id);
    Instant lastEvent =
        orderedAt.containsKey(id) ? orderedAt.get(id) : last == null ? null : last.getEventTs();
    TickRules.Rejection no = rules.check(tick, ref.instrument(id), lastEvent, now);
    if (no != null) {
      refuse(
          record, tickCodec.encode(topic() + "-value", tick), no.fault().name(), no.detail(), now);
      return;
    }
    if (!tick.getEventTs().isAfter(now)) {
      // what later ticks are ordered against: a tick stamped ahead of the broker's clock is used,
      // but its claim of time is not, so the real ticks after it are in order
      orderedAt.put(id, tick.getEventTs());
    } else {
      orderedAt.putIfAbsent(id, lastEvent);
    }
    PriceTick taken = taken(tick, now);
    long price = Micros.of(taken.getPrice());
    PriceBand.Step step =
        band.onTick(
            price,
            taken.getEventTs().toEpochMilli(),
            taken.getSequence(),
            last == null ? null : Micros.of(last.getPrice()),
            halt,
            now.toEpochMilli());
    switch (step.verdict()) {
      case ACCEPT -> accept(record, taken);
      case HALT -> {
        halts.put(id, step.halt());
        held.record();
        announce(record, id, "HALTED", step.halt(), last, now);
      }
      case HOLD -> {
        halts.put(id, step.halt());
        held.record();
      }
      case RESUME -> {
        halts.delete(id);
        accept(record, taken);
        announce(
            record,
            id,
            "TRADING",
            new PriceBand.Halt(
                "CONFIRMED",
                now.toEpochMilli(),
                FEED,
                band.confirmTicks()
                    + " consecutive ticks agreed on "
                    + Micros.format(price)
                    + " (halted since "
                    + Instant.ofEpochMilli(halt.sinceMs())
                    + ": "
                    + halt.detail()
                    + ")",
                0,
                0,
                0,
                0),
            taken,
            now);
      }
    }
  }

  /**
   * An operator's halt or resumption. A control that names no equity or no known action is a dead
   * letter: it cannot be applied, and it says so where operators look.
   */
  private void control(
      FixedKeyRecord<String, SpecificRecord> record, PriceControl control, Instant now) {
    String id = control.getInstrumentId();
    Instrument instrument = ref.instrument(id);
    String problem =
        !id.equals(record.key())
            ? "a control is keyed by its instrument id"
            : Identifiers.problem(control.getOperator(), Identifiers.MAX_ID) != null
                ? "operator " + Identifiers.problem(control.getOperator(), Identifiers.MAX_ID)
                : instrument == null || !"EQUITY".equals(instrument.getInstrumentType())
                    ? "no equity " + BoundedLetters.clip(id, 64) + " (options halt with theirs)"
                    : !"HALT".equals(control.getAction()) && !"RESUME".equals(control.getAction())
                        ? "action must be HALT or RESUME, got "
                            + BoundedLetters.clip(control.getAction(), 64)
                        : null;
    if (problem != null) {
      refuse(
          record,
          controlCodec.encode(topic() + "-value", control),
          "INVALID_CONTROL",
          problem,
          now);
      return;
    }
    String reason = BoundedLetters.clip(control.getReason(), Ledger.MAX_DETAIL);
    PriceBand.Halt halt = halts.get(id);
    PriceTick last = lastAccepted(id);
    if ("HALT".equals(control.getAction())) {
      PriceBand.Halt byOperator =
          PriceBand.operatorHalt(halt, control.getOperator(), reason, now.toEpochMilli());
      halts.put(id, byOperator);
      announce(record, id, "HALTED", byOperator, last, now);
      return;
    }
    PriceTick resumedAt = last;
    if (halt != null) {
      halts.delete(id);
      // The feed's last held tick is the price trading resumes at only if the band would take it
      // (close to the last accepted price) or the feed has confirmed it (agreeing ticks); a lone
      // spike held under an operator's halt is not, and the band judges the next tick as usual.
      boolean confirmed =
          halt.heldPrice() > 0
              && (last == null
                  || band.within(halt.heldPrice(), Micros.of(last.getPrice()))
                  || halt.confirmations() >= band.confirmTicks());
      if (confirmed) {
        // the feed's last word while halted is the price trading resumes at
        resumedAt =
            PriceTick.newBuilder()
                .setInstrumentId(id)
                .setPrice(Micros.toDecimal(halt.heldPrice()))
                .setEventTs(Instant.ofEpochMilli(halt.heldEventMs()))
                .setSequence(halt.heldSequence())
                .build();
        accept(record, resumedAt);
      }
    }
    announce(
        record,
        id,
        "TRADING",
        new PriceBand.Halt(
            PriceBand.OPERATOR,
            now.toEpochMilli(),
            control.getOperator(),
            halt == null ? "resumed (it was not halted): " + reason : reason,
            0,
            0,
            0,
            0),
        resumedAt,
        now);
  }

  private PriceTick lastAccepted(String id) {
    PriceTick last = accepted.get(id);
    return last != null ? last : ref.latestTick(id);
  }

  private void accept(FixedKeyRecord<String, SpecificRecord> record, PriceTick tick) {
    accepted.put(tick.getInstrumentId(), tick);
    context.forward(record.withValue(new Checked(tick, null, null)));
  }

  /** The tick as the broker takes it: its event time never later than the broker's clock. */
  private static PriceTick taken(PriceTick tick, Instant now) {
    Instant at = TickRules.takenAt(tick, now);
    return at.equals(tick.getEventTs()) ? tick : PriceTick.newBuilder(tick).setEventTs(at).build();
  }

  private void announce(
      FixedKeyRecord<String, SpecificRecord> record,
      String id,
      String state,
      PriceBand.Halt why,
      PriceTick reference,
      Instant now) {
    InstrumentStatus status =
        InstrumentStatus.newBuilder()
            .setInstrumentId(id)
            .setState(state)
            .setReason(why.reason())
            .setDetail(BoundedLetters.clip(why.detail(), Ledger.MAX_DETAIL))
            .setChangedBy(why.by())
            .setSinceTs(Instant.ofEpochMilli(why.sinceMs()))
            .setReferencePrice(reference == null ? null : reference.getPrice())
            .setHeldPrice(why.heldPrice() > 0 ? Micros.toDecimal(why.heldPrice()) : null)
            .setTs(now)
            .build();
    context.forward(record.withValue(new Checked(null, null, status)));
  }

  private String topic() {
    return context.recordMetadata().map(RecordMetadata::topic).orElse("price-ticks");
  }

  private void refuse(
      FixedKeyRecord<String, SpecificRecord> record,
      byte[] value,
      String fault,
      String detail,
      Instant now) {
    RecordMetadata from = context.recordMetadata().orElseThrow();
    String key = record.key();
    DeadLetter letter =
        BoundedLetters.letter(
            from.topic(),
            from.partition(),
            from.offset(),
            key == null ? null : key.getBytes(StandardCharsets.UTF_8),
            value,
            fault,
            detail,
            application,
            now);
    context.forward(record.withValue(new Checked(null, letter, null)));
  }
}
