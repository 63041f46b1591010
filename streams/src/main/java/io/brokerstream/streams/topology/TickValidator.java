package io.brokerstream.streams.topology;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.BoundedLetters;
import io.brokerstream.rules.TickRules;
import io.brokerstream.serde.AvroCodec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Checks each raw tick against the tick rules, with the instrument from reference data and the last
 * accepted tick of its instrument: an accepted tick goes on to the price fold, a refused one
 * becomes a dead letter naming its fault. Either way it is counted: ticks in = folded +
 * dead-lettered.
 *
 * <p>The last accepted tick is this task's own (it validates every tick of its partitions, in
 * order) or, for an instrument it has not seen since it started, prices.latest's. A tick keyed by
 * anything but its own instrument id is refused (KEY_MISMATCH): the fold and prices.latest are
 * keyed by the record's key.
 */
final class TickValidator implements FixedKeyProcessor<String, PriceTick, TickValidator.Checked> {
  /** An accepted tick, or the dead letter of a refused one. */
  record Checked(PriceTick tick, DeadLetter refused) {}

  private final TickRules rules;
  private final ReferenceCache cache;
  private final AvroCodec<PriceTick> tickCodec;
  private final String application;

  /**
   * The last tick this task accepted per instrument: bounded by the instruments, as only known ones
   * pass.
   */
  private final Map<String, PriceTick> accepted = new HashMap<>();

  private FixedKeyProcessorContext<String, Checked> context;
  private StoreReferenceData ref;

  TickValidator(
      TickRules rules, ReferenceCache cache, AvroCodec<PriceTick> tickCodec, String application) {
    this.rules = rules;
    this.cache = cache;
    this.tickCodec = tickCodec;
    this.application = application;
  }

  @Override
  public void init(FixedKeyProcessorContext<String, Checked> context) {
    this.context = context;
    this.ref = new StoreReferenceData(context, cache);
  }

  @Override
  public void process(FixedKeyRecord<String, PriceTick> record) {
    PriceTick tick = record.value();
    if (tick == null) {
      return; // a tombstone on a ticks topic means nothing
    }
    Instant now = Instant.ofEpochMilli(context.currentSystemTimeMs());
    String id = tick.getInstrumentId();
    TickRules.Rejection no;
    if (!id.equals(record.key())) {
      no =
          new TickRules.Rejection(
              TickRules.Fault.KEY_MISMATCH,
              "a tick is keyed by its instrument id; this one's key is not "
                  + BoundedLetters.clip(id, 64));
    } else {
      PriceTick last = accepted.get(id);
      if (last == null) {
        last = ref.latestTick(id);
      }
      no =
          rules.check(
              tick,
              ref.instrument(id),
              last == null ? null : Micros.of(last.getPrice()),
              last == null ? null : last.getEventTs(),
              now);
    }
    if (no == null) {
      accepted.put(id, tick);
      context.forward(record.withValue(new Checked(tick, null)));
      return;
    }
    RecordMetadata from = context.recordMetadata().orElseThrow();
    String key = record.key();
    DeadLetter letter =
        BoundedLetters.letter(
            from.topic(),
            from.partition(),
            from.offset(),
            key == null ? null : key.getBytes(StandardCharsets.UTF_8),
            tickCodec.encode(from.topic() + "-value", tick),
            no.fault().name(),
            no.detail(),
            application,
            now);
    context.forward(record.withValue(new Checked(null, letter)));
  }
}
