package io.brokerstream.pnl;

import io.brokerstream.avro.EquityStart;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Position;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.money.Micros;
import io.brokerstream.serde.SchemaRegistry;
import java.io.IOException;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.util.Collector;

/**
 * The four inputs, from Confluent wire-format Avro values to {@link PnlInput}. Value-only
 * deserializers (Flink's own interface) so that the job never handles Kafka client classes, which
 * the cluster's connector relocates. Tombstones (deleted reference rows) are skipped.
 */
public final class InputSchemas {
  private InputSchemas() {}

  /** Decodes with a registry created on the task, not shipped with the job graph. */
  abstract static class RegistryDeserializer<T extends SpecificRecord>
      implements DeserializationSchema<PnlInput> {
    private static final long serialVersionUID = 1L;
    private final TaskCodec<T> codec;

    RegistryDeserializer(String registryUrl, Class<T> type) {
      this.codec = new TaskCodec<>(registryUrl, type);
    }

    /** For tests: a registry of their own. */
    void useRegistry(SchemaRegistry registry) {
      codec.useRegistry(registry);
    }

    @Override
    public void open(InitializationContext context) {
      codec.get();
    }

    @Override
    public PnlInput deserialize(byte[] message) throws IOException {
      throw new UnsupportedOperationException("deserialize(byte[], Collector) is used");
    }

    @Override
    public void deserialize(byte[] message, Collector<PnlInput> out) {
      if (message == null) {
        return;
      }
      PnlInput in = convert(codec.get().decode(message));
      if (in != null) {
        out.collect(in);
      }
    }

    abstract PnlInput convert(T record);

    @Override
    public boolean isEndOfStream(PnlInput next) {
      return false;
    }

    @Override
    public TypeInformation<PnlInput> getProducedType() {
      return TypeInformation.of(PnlInput.class);
    }
  }

  public static final class Ticks extends RegistryDeserializer<PriceTick> {
    public Ticks(String registryUrl) {
      super(registryUrl, PriceTick.class);
    }

    @Override
    PnlInput convert(PriceTick t) {
      return PnlInput.tick(
          t.getInstrumentId(),
          Micros.of(t.getPrice()),
          t.getEventTs().toEpochMilli(),
          t.getSequence());
    }
  }

  public static final class Positions extends RegistryDeserializer<Position> {
    public Positions(String registryUrl) {
      super(registryUrl, Position.class);
    }

    @Override
    PnlInput convert(Position p) {
      long cost = p.getCostBasis() == null ? 0 : Micros.of(p.getCostBasis());
      // a record written before positions carried their cost basis: at its average cost
      return cost == 0 && p.getQuantity() != 0
          ? PnlInput.position(
              p.getAccountId(),
              p.getMemberId(),
              p.getInstrumentId(),
              p.getUnderlyingId(),
              p.getMultiplier(),
              p.getQuantity(),
              Micros.of(p.getAvgCost()),
              p.getVersion())
          : PnlInput.positionAtCost(
              p.getAccountId(),
              p.getMemberId(),
              p.getInstrumentId(),
              p.getUnderlyingId(),
              p.getMultiplier(),
              p.getQuantity(),
              cost,
              p.getVersion());
    }
  }

  /** Option terms from the instruments table; equities carry nothing the revaluation needs. */
  public static final class Instruments extends RegistryDeserializer<Instrument> {
    public Instruments(String registryUrl) {
      super(registryUrl, Instrument.class);
    }

    @Override
    PnlInput convert(Instrument i) {
      if (!"OPTION".equals(i.getInstrumentType())
          || i.getUnderlyingId() == null
          || i.getStrike() == null
          || i.getMaturity() == null
          || i.getOptionType() == null) {
        return null;
      }
      return PnlInput.optionTerms(
          i.getInstrumentId(),
          i.getUnderlyingId(),
          "CALL".equals(i.getOptionType()),
          "AMERICAN".equals(i.getExerciseStyle()),
          Micros.of(i.getStrike()),
          (int) i.getMaturity().toEpochDay(),
          i.getMultiplier());
    }
  }

  public static final class Volatilities extends RegistryDeserializer<EquityStart> {
    public Volatilities(String registryUrl) {
      super(registryUrl, EquityStart.class);
    }

    @Override
    PnlInput convert(EquityStart e) {
      return PnlInput.volatility(e.getInstrumentId(), e.getVolatility());
    }
  }
}
