package io.brokerstream.streams.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Position;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.PositionState;
import io.brokerstream.serde.InMemorySchemaRegistry;
import io.brokerstream.streams.AppSerdes;
import io.brokerstream.streams.Topics;
import java.nio.ByteBuffer;
import java.time.Instant;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

class BookedPositionTest {
  private final Serde<Position> stored =
      new AppSerdes(new InMemorySchemaRegistry(), true).position();

  private static Position position(PositionState s, long cash) {
    return Position.newBuilder()
        .setAccountId("A1")
        .setMemberId("M1")
        .setInstrumentId("EQ1")
        .setUnderlyingId("EQ1")
        .setMultiplier(1)
        .setQuantity(s.quantity())
        .setAvgCost(Micros.toDecimal(s.avgCost()))
        .setCostBasis(Micros.toDecimal(s.costBasis()))
        .setRealizedPnl(Micros.toDecimal(s.realized()))
        .setVersion(s.version())
        .setUpdatedTs(Instant.ofEpochMilli(1_700_000_000_000L))
        .setCash(Micros.toDecimal(cash))
        .build();
  }

  @Test
  void aStoredPositionKeepsItsFiguresAndCashToTheMicroThroughItsChangelogRecord() {
    for (BookedPosition p :
        new BookedPosition[] {
          new BookedPosition(PositionState.atAverage(30, 102_220_000, 0, 2, 1), -3_066_600_000L),
          new BookedPosition(
              PositionState.atAverage(-15, 105_000_000, 50_000_001, 7, 1), 1_575_000_001L),
          new BookedPosition(PositionState.atAverage(0, 0, -1, 1, 1), 999_999_999_999_999_999L),
          new BookedPosition(PositionState.atAverage(1, 1, 0, 1, 1), -999_999_999_999_999_999L),
          // a cost basis no average states exactly: 3 units that cost 10 micros
          new BookedPosition(new PositionState(3, 10, 0, 2, 1), -10),
        }) {
      byte[] record =
          stored.serializer().serialize(Topics.POSITIONS, position(p.state(), p.cash()));
      // the Confluent wire format readers of the positions topic expect: magic byte, schema id
      assertThat(record[0]).isZero();
      assertThat(ByteBuffer.wrap(record, 1, 4).getInt()).isPositive();
      assertThat(BookedPosition.of(stored.deserializer().deserialize(Topics.POSITIONS, record)))
          .isEqualTo(p);
    }
  }

  @Test
  void aPositionWrittenBeforeCostBasesWereKeptIsTakenAtItsAverageCost() {
    Position old =
        Position.newBuilder(position(PositionState.atAverage(-15, 105_000_000, 0, 7, 100), 0))
            .setMultiplier(100)
            .setCostBasis(Micros.toDecimal(0))
            .build();

    assertThat(BookedPosition.of(old).state())
        .isEqualTo(new PositionState(-15, 1_575_000_000L, 0, 7, 100));
  }

  @Test
  void noStoredPositionIsFlatWithNoCashMoved() {
    assertThat(BookedPosition.of(null)).isEqualTo(BookedPosition.NONE);
    assertThat(BookedPosition.NONE.state()).isEqualTo(PositionState.FLAT);
    assertThat(BookedPosition.NONE.cash()).isZero();
  }
}
