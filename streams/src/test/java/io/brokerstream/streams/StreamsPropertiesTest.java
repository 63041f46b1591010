package io.brokerstream.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.brokerstream.serde.InMemorySchemaRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StreamsPropertiesTest {
  private static Properties of(Map<String, String> overrides) {
    AppSerdes serdes = new AppSerdes(new InMemorySchemaRegistry(), true);
    return StreamsProperties.of(AppSettings.of(overrides), serdes.deadLetters());
  }

  @Test
  void internalTopicsTakeTheBrokersReplicationSoAThreeBrokerClusterReplicatesChangelogs() {
    assertEquals(-1, of(Map.of()).get(StreamsConfig.REPLICATION_FACTOR_CONFIG));
  }

  @Test
  void theTransactionalProducerKeepsOneRequestInFlight() {
    Properties p = of(Map.of());
    assertEquals(StreamsConfig.EXACTLY_ONCE_V2, p.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
    assertEquals(
        1,
        p.get(StreamsConfig.producerPrefix(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION)));
  }

  @Test
  void aPassThroughSettingOverridesTheDefault() {
    Properties p = of(Map.of("streams.producer.max.in.flight.requests.per.connection", "2"));
    assertEquals(
        "2",
        p.get(StreamsConfig.producerPrefix(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION)));
  }

  @Test
  void noSettingLetsATaskStopWaitingForItsResults() {
    assertEquals(0L, of(Map.of()).get(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG));
    assertEquals(
        0L,
        of(Map.of("streams.max.task.idle.ms", "-1")).get(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG));
  }

  @Test
  void noLoginFileMeansPlaintext() {
    assertNull(of(Map.of()).get("security.protocol"));
  }

  @Test
  void theLoginFileReachesEveryClientOfTheApp(@TempDir Path dir) throws Exception {
    Path login =
        Files.writeString(
            dir.resolve("streams.properties"),
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n");
    Properties p = of(Map.of("kafka.login", login.toString()));
    assertEquals("SASL_SSL", p.get("security.protocol"));
    assertEquals("SCRAM-SHA-512", p.get("sasl.mechanism"));
  }
}
