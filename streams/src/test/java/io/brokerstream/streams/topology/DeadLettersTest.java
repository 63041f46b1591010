package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.OrderStatus;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Nothing is lost: unreadable and unprocessable orders become dead letters, and the counts
 * reconcile.
 *
 * <p>At-least-once here: under exactly-once the TopologyTestDriver drops what a deserialization
 * handler sends while it enqueues a record. The integration tests check dead letters under
 * exactly-once on a real broker.
 */
class DeadLettersTest {
  private final FlowFixture flow =
      new FlowFixture(Map.of("streams.processing.guarantee", "at_least_once")).standard();

  @AfterEach
  void close() {
    flow.close();
  }

  @Test
  void unreadableRecordsAreDeadLetteredWithTheirBytesAndCause() {
    byte[] garbage = "not avro at all".getBytes(StandardCharsets.UTF_8);
    flow.rawOrders.pipeInput("M1", garbage);
    assertThat(flow.results.isEmpty()).isTrue();
    DeadLetter letter = flow.deadLetters.readValue();
    assertThat(letter.getSourceTopic()).isEqualTo("orders");
    assertThat(letter.getSourceOffset()).isZero();
    assertThat(letter.getRecordValue()).isEqualTo(ByteBuffer.wrap(garbage));
    assertThat(letter.getRecordKey())
        .isEqualTo(ByteBuffer.wrap("M1".getBytes(StandardCharsets.UTF_8)));
    assertThat(letter.getErrorClass()).endsWith("SerializationException");
    assertThat(letter.getMessage()).contains("magic byte");
    assertThat(letter.getApplication()).isEqualTo("brokerstream-orders");
  }

  @Test
  void anOrderWithoutAValueIsDeadLetteredByTheProcessingHandler() {
    flow.rawOrders.pipeInput("M1", (byte[]) null);
    DeadLetter letter = flow.deadLetters.readValue();
    assertThat(letter.getMessage()).contains("without a value");
    assertThat(letter.getRecordValue()).isNull();
  }

  @Test
  void producedEqualsAcceptedPlusRejectedPlusDeadLettered() {
    int produced = 0;
    for (int i = 0; i < 20; i++) {
      flow.orders.pipeInput(
          "M1",
          flow.order(i % 3 == 0 ? "NOPE" : "A1", "EQ1", io.brokerstream.avro.Side.BUY, 1, null));
      produced++;
      if (i % 5 == 0) {
        flow.rawOrders.pipeInput("M1", new byte[] {0, 0, 0, 0, 99, 1});
        produced++;
      }
    }
    var results = flow.results.readValuesToList();
    long accepted = results.stream().filter(r -> r.getStatus() == OrderStatus.ACCEPTED).count();
    long rejected = results.stream().filter(r -> r.getStatus() == OrderStatus.REJECTED).count();
    long dead = flow.deadLetters.readValuesToList().size();
    assertThat(accepted).isEqualTo(13);
    assertThat(rejected).isEqualTo(7);
    assertThat(dead).isEqualTo(4);
    assertThat(accepted + rejected + dead).isEqualTo(produced);
  }
}
