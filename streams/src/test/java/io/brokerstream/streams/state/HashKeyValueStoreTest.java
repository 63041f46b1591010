package io.brokerstream.streams.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;

class HashKeyValueStoreTest {
  private final HashKeyValueStore store = new HashKeyValueStore("t");

  private static Bytes key(String text) {
    return Bytes.wrap(text.getBytes(StandardCharsets.UTF_8));
  }

  private static List<String> keys(KeyValueIterator<Bytes, byte[]> it) {
    List<String> out = new ArrayList<>();
    try (it) {
      while (it.hasNext()) {
        KeyValue<Bytes, byte[]> kv = it.next();
        out.add(new String(kv.key.get(), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  @Test
  void pointOperations() {
    store.put(key("a"), new byte[] {1});
    store.put(key("a"), new byte[] {2});
    assertThat(store.get(key("a"))).containsExactly(2);
    assertThat(store.putIfAbsent(key("a"), new byte[] {3})).containsExactly(2);
    assertThat(store.delete(key("a"))).containsExactly(2);
    assertThat(store.get(key("a"))).isNull();
    store.put(key("b"), null);
    assertThat(store.approximateNumEntries()).isZero();
  }

  @Test
  void scansAreOrderedLikeTheBuiltInStore() {
    for (String k : List.of("A2|X", "A1|Z", "A1|Y", "A10|Q", "B|1")) {
      store.put(key(k), new byte[] {1});
    }
    assertThat(keys(store.prefixScan("A1|", new StringSerializer())))
        .containsExactly("A1|Y", "A1|Z");
    // bytewise: '0' (0x30) sorts before '|' (0x7c)
    assertThat(keys(store.all())).containsExactly("A10|Q", "A1|Y", "A1|Z", "A2|X", "B|1");
    assertThat(keys(store.range(key("A1|Z"), key("A2|X")))).containsExactly("A1|Z", "A2|X");
    assertThat(keys(store.reverseAll())).containsExactly("B|1", "A2|X", "A1|Z", "A1|Y", "A10|Q");
    store.delete(key("A1|Y"));
    assertThat(keys(store.prefixScan("A1|", new StringSerializer()))).containsExactly("A1|Z");
  }

  @Test
  void aStoreOfPointLookupsKeepsNoOrderAndRefusesScans() {
    KeyValueStore<Bytes, byte[]> lookups = HashKeyValueStore.pointLookups("u").get();
    for (String k : List.of("b", "a", "c")) {
      lookups.put(key(k), new byte[] {1});
    }
    lookups.delete(key("c"));
    assertThat(lookups.get(key("a"))).containsExactly(1);
    assertThat(lookups.get(key("c"))).isNull();
    assertThat(keys(lookups.all())).containsExactlyInAnyOrder("a", "b");
    assertThatThrownBy(() -> lookups.range(key("a"), key("b")))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("read by key alone");
    assertThatThrownBy(() -> lookups.prefixScan("a", new StringSerializer()))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(lookups::reverseAll).isInstanceOf(UnsupportedOperationException.class);
    lookups.close();
    assertThat(lookups.approximateNumEntries()).isZero();
  }
}
