package io.brokerstream.streams.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.brokerstream.streams.AppSettings;
import io.brokerstream.streams.http.HttpEdge;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;

/** The floor benchmarks do what they claim to measure: no more work, and no less. */
class FloorsTest {

  @Test
  void theFlowFloorWritesAResultAndAPositionPerOrderOfTheirSizes() {
    AtomicLong processed = new AtomicLong();
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, "floor-test");
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    try (TopologyTestDriver driver = new TopologyTestDriver(FlowFloor.topology(processed), p)) {
      var orders =
          driver.createInputTopic(
              FlowFloor.ORDERS, new StringSerializer(), new ByteArraySerializer());
      var results =
          driver.createOutputTopic(
              FlowFloor.RESULTS, new StringDeserializer(), new ByteArrayDeserializer());
      var positions =
          driver.createOutputTopic(
              FlowFloor.POSITIONS, new StringDeserializer(), new ByteArrayDeserializer());
      for (int i = 0; i < 3; i++) {
        orders.pipeInput("M000001", new byte[190]);
      }
      var r = results.readKeyValuesToList();
      var q = positions.readKeyValuesToList();
      assertEquals(3, r.size());
      assertEquals(3, q.size());
      assertEquals(260, r.get(0).value.length);
      assertEquals(170, q.get(0).value.length);
      assertTrue(q.get(0).key.startsWith("M000001|"));
      assertEquals(3, processed.get());
    }
  }

  @Test
  void theHttpFloorAcceptsAPlacementAndHoldsPollsUntilTheNextAnnouncement() throws Exception {
    HttpFloor floor = new HttpFloor();
    ExecutorService workers = Executors.newFixedThreadPool(2);
    try (HttpEdge edge = floor.edge("127.0.0.1", 0, AppSettings.of(Map.of()), workers)) {
      InetSocketAddress at = edge.start();
      String base = "http://127.0.0.1:" + at.getPort();
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      HttpResponse<String> placed =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "/orders"))
                  .POST(HttpRequest.BodyPublishers.ofString("{}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(202, placed.statusCode());

      CompletableFuture<HttpResponse<String>> poll =
          http.sendAsync(
              HttpRequest.newBuilder(URI.create(base + "/orders/floor")).GET().build(),
              HttpResponse.BodyHandlers.ofString());
      long until = System.currentTimeMillis() + 5_000;
      while (floor.heldCount() == 0 && System.currentTimeMillis() < until) {
        Thread.sleep(5);
      }
      assertEquals(1, floor.heldCount());
      assertTrue(!poll.isDone());
      floor.answerHeld();
      HttpResponse<String> answered = poll.get(5, TimeUnit.SECONDS);
      assertEquals(200, answered.statusCode());
      assertTrue(answered.body().contains("\"status\":\"ACCEPTED\""));
      assertEquals(0, floor.heldCount());

      HttpResponse<String> other =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "/accounts")).GET().build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(404, other.statusCode());
    } finally {
      workers.shutdownNow();
    }
  }
}
