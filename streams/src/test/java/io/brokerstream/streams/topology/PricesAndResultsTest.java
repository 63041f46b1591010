package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.PriceTick;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PricesAndResultsTest {
  private final FlowFixture flow = new FlowFixture().standard();

  @AfterEach
  void close() {
    flow.close();
  }

  @Test
  void ticksAreFoldedToTheLatestPerInstrumentPerCommit() {
    flow.equity("EQ9", "ACTIVE");
    flow.ticks.pipeInput("EQ1", FlowFixture.tick("EQ1", "101", 2));
    flow.ticks.pipeInput("EQ1", FlowFixture.tick("EQ1", "102", 3));
    flow.ticks.pipeInput("EQ9", FlowFixture.tick("EQ9", "7", 1));
    flow.ticks.pipeInput("EQ1", FlowFixture.tick("EQ1", "103", 4));
    flow.driver.advanceWallClockTime(Duration.ofMillis(200)); // past the commit interval
    var latest = flow.pricesOut.readKeyValuesToMap();
    assertThat(latest).hasSize(2);
    PriceTick eq1 = latest.get("EQ1");
    assertThat(eq1.getPrice()).isEqualTo(FlowFixture.money("103"));
    assertThat(eq1.getSequence()).isEqualTo(4);
  }

  @Test
  void resultsAreQueryableByMemberAndOrderIdAndAnnounced() {
    // the driver feeds what the flow writes to order-results back into the table, as Kafka would
    OrderResult sent = flow.buy("A1", "EQ1", 1);
    var store = flow.driver.<String, OrderResult>getKeyValueStore(StoreNames.ORDER_RESULTS);
    assertThat(store.get("M1|" + sent.getOrderId())).isEqualTo(sent);
    assertThat(store.get(sent.getOrderId())).isNull();
    assertThat(flow.notified).containsExactly(sent);
    // the gateway finds the same store without asking Kafka Streams: the one its task opened
    assertThat(flow.localResults.store(0).get("M1|" + sent.getOrderId())).isEqualTo(sent);
  }
}
