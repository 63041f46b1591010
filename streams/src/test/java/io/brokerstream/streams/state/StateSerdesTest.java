package io.brokerstream.streams.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.rules.PositionState;
import java.nio.ByteBuffer;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

class StateSerdesTest {
  private final Serde<BookedPosition> positions = StateSerdes.positions();

  private BookedPosition roundTrip(BookedPosition p) {
    return positions.deserializer().deserialize("t", positions.serializer().serialize("t", p));
  }

  @Test
  void aPositionKeepsItsCashToTheMicro() {
    for (BookedPosition p :
        new BookedPosition[] {
          BookedPosition.NONE,
          new BookedPosition(new PositionState(30, 102_220_000, 0, 2), -3_066_600_000L),
          new BookedPosition(new PositionState(-15, 105_000_000, 50_000_000, 7), 1_575_000_001L),
          new BookedPosition(
              new PositionState(Long.MAX_VALUE, Long.MIN_VALUE, -1, 1), Long.MIN_VALUE),
        }) {
      assertThat(roundTrip(p)).isEqualTo(p);
    }
  }

  @Test
  void theFirstLayoutReadsAsAPositionWithNoCash() {
    byte[] layout1 =
        ByteBuffer.allocate(33)
            .put((byte) 1)
            .putLong(10)
            .putLong(95_000_000)
            .putLong(0)
            .putLong(1)
            .array();
    assertThat(positions.deserializer().deserialize("t", layout1))
        .isEqualTo(new BookedPosition(new PositionState(10, 95_000_000, 0, 1), 0));
  }

  @Test
  void anUnknownLayoutIsRefusedNotMisread() {
    for (byte[] bytes :
        new byte[][] {new byte[0], new byte[41], new byte[33], {1, 2, 3}, new byte[] {2}}) {
      assertThatThrownBy(() -> positions.deserializer().deserialize("t", bytes))
          .isInstanceOf(IllegalStateException.class);
    }
  }
}
