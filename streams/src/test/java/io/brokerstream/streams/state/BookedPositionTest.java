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
          new BookedPosition(new PositionState(30, 102_220_000, 0, 2), -3_066_600_000L),
          new BookedPosition(new PositionState(-15, 105_000_000, 50_000_001, 7), 1_575_000_001L),
          new BookedPosition(new PositionState(0, 0, -1, 1), 999_999_999_999_999_999L),
          new BookedPosition(new PositionState(1, 1, 0, 1), -999_999_999_999_999_999L),
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
  void noStoredPositionIsFlatWithNoCashMoved() {
    assertThat(BookedPosition.of(null)).isEqualTo(BookedPosition.NONE);
    assertThat(BookedPosition.NONE.state()).isEqualTo(PositionState.FLAT);
    assertThat(BookedPosition.NONE.cash()).isZero();
  }
}
