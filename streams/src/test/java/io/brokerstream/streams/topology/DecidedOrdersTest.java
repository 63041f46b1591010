package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.Side;
import io.brokerstream.serde.InMemorySchemaRegistry;
import io.brokerstream.streams.AppSerdes;
import io.brokerstream.streams.state.HashKeyValueStore;
import io.brokerstream.streams.state.StateSerdes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * What a member task counts as decided, with the read-back of its results delayed as Kafka delays
 * it (a commit, then a fetch), which the topology test driver never does: it feeds a result back at
 * once.
 */
class DecidedOrdersTest {
  private final KeyValueStore<String, OrderResult> results =
      Stores.keyValueStoreBuilder(
              Stores.inMemoryKeyValueStore(StoreNames.ORDER_RESULTS),
              Serdes.String(),
              new AppSerdes(new InMemorySchemaRegistry(), true).result())
          .withLoggingDisabled()
          .build();

  /** A task's view: the results store it restored, and a fresh in-memory unread store. */
  private DecidedOrders task() {
    MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
    KeyValueStore<String, Long> unread =
        Stores.keyValueStoreBuilder(
                HashKeyValueStore.supplier(StoreNames.RESULTS_UNREAD),
                Serdes.String(),
                StateSerdes.micros())
            .withLoggingDisabled()
            .build();
    unread.init(context.getStateStoreContext(), unread);
    if (!results.isOpen()) {
      results.init(context.getStateStoreContext(), results);
    }
    context.addStateStore(unread);
    context.addStateStore(results);
    return new DecidedOrders(context);
  }

  private static OrderResult result(String member, String orderId) {
    return OrderResult.newBuilder()
        .setOrderId(orderId)
        .setMemberId(member)
        .setAccountId("A1")
        .setInstrumentId("EQ1")
        .setSide(Side.BUY)
        .setQuantity(1)
        .setClientTs(Instant.EPOCH)
        .setIngestTs(Instant.EPOCH)
        .setProcessedTs(Instant.EPOCH)
        .setStatus(OrderStatus.REJECTED)
        .build();
  }

  @Test
  void anOrderIsDecidedFromItsEmitThroughItsReadBack() {
    DecidedOrders decided = task();
    assertThat(decided.decided("M1|o1")).isFalse();
    decided.emitted("M1|o1", 5);
    assertThat(decided.decided("M1|o1")).isTrue(); // emitted, not read back: a retry now is caught
    assertThat(decided.decided("M2|o1")).isFalse(); // the id is per member
    decided.readBack("M1|o1", result("M1", "o1"));
    assertThat(decided.decided("M1|o1")).isTrue();
    assertThat(results.get("M1|o1").getMemberId()).isEqualTo("M1");
  }

  @Test
  void aRestartedTaskKnowsWhatWasCommittedAndForgetsWhatAborted() {
    DecidedOrders before = task();
    before.emitted("M1|committed", 5);
    before.readBack("M1|committed", result("M1", "committed"));
    before.emitted("M1|aborted", 6); // its transaction aborts: never read back
    DecidedOrders after = task(); // the results store restored, the unread ones gone
    assertThat(after.decided("M1|committed")).isTrue();
    assertThat(after.decided("M1|aborted")).isFalse(); // its order is read again and decided
  }

  @Test
  void aStartingTaskCountsTheResultsItCommittedButHadNotReadBack() {
    DecidedOrders before = task();
    before.emitted("M1|read", 5);
    before.readBack("M1|read", result("M1", "read"));
    before.emitted("M1|committed-unread", 6); // committed, the task stops before reading it back
    DecidedOrders after = task(); // restored up to what it had read
    assertThat(after.decided("M1|committed-unread")).isFalse();
    List<Integer> asked = new ArrayList<>();
    after.catchUp(
        (partition, each) -> {
          asked.add(partition);
          each.accept("M1|committed-unread", result("M1", "committed-unread"));
        },
        3);
    assertThat(asked).containsExactly(3);
    assertThat(after.decided("M1|committed-unread")).isTrue();
    assertThat(after.decided("M1|read")).isTrue();
    after.catchUp(ResultsTail.NONE, 3); // nothing past the offset: nothing changes
    assertThat(after.decided("M1|committed-unread")).isTrue();
  }

  @Test
  void aResultOfSomeoneElsesReadBackLeavesTheUnreadOnesAlone() {
    DecidedOrders decided = task();
    decided.emitted("M1|o1", 5);
    decided.readBack("M1|o2", result("M1", "o2"));
    assertThat(decided.decided("M1|o1")).isTrue();
    assertThat(decided.decided("M1|o2")).isTrue();
  }
}
