package io.brokerstream.streams.topology;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.rules.ReferenceData;
import io.brokerstream.rules.TickRules;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Checks each raw tick against the tick rules, with the instrument from reference data and the last
 * accepted price (prices.latest): an accepted tick goes on to the price fold, a refused one becomes
 * a dead letter naming its fault. Either way it is counted: ticks in = folded + dead-lettered.
 */
final class TickValidator implements FixedKeyProcessor<String, PriceTick, TickValidator.Checked> {
  /** An accepted tick, or the dead letter of a refused one. */
  record Checked(PriceTick tick, DeadLetter refused) {}

  private final TickRules rules;
  private final ReferenceCache cache;
  private final AvroCodec<PriceTick> tickCodec;
  private final String application;
  private FixedKeyProcessorContext<String, Checked> context;
  private ReferenceData ref;

  TickValidator(TickRules rules, ReferenceCache cache, AvroCodec<PriceTick> tickCodec, String application) {
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
    TickRules.Rejection no = rules.check(tick, ref.instrument(tick.getInstrumentId()),
        ref.priceMicros(tick.getInstrumentId()), Instant.ofEpochMilli(context.currentSystemTimeMs()));
    if (no == null) {
      context.forward(record.withValue(new Checked(tick, null)));
      return;
    }
    RecordMetadata from = context.recordMetadata().orElseThrow();
    String key = record.key();
    DeadLetter letter = DeadLetter.newBuilder()
        .setSourceTopic(from.topic()).setSourcePartition(from.partition()).setSourceOffset(from.offset())
        .setRecordKey(key == null ? null : ByteBuffer.wrap(key.getBytes(StandardCharsets.UTF_8)))
        .setRecordValue(ByteBuffer.wrap(tickCodec.encode(from.topic() + "-value", tick)))
        .setErrorClass(no.fault().name()).setMessage(no.detail()).setApplication(application)
        .setTs(Instant.ofEpochMilli(context.currentSystemTimeMs())).build();
    context.forward(record.withValue(new Checked(null, letter)));
  }
}
