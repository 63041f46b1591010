package io.brokerstream.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.brokerstream.avro.PriceTick;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The HTTP conversation with a Confluent-API registry, against a scripted loopback server. */
class RestSchemaRegistryTest {
  private HttpServer server;
  private final List<String> requests = new ArrayList<>();
  private final ObjectMapper json = new ObjectMapper();
  private volatile int failing;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        exchange -> {
          String body =
              new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
          String path = exchange.getRequestURI().getPath();
          requests.add(exchange.getRequestMethod() + " " + path);
          String answer;
          int status = 200;
          if (failing > 0) {
            failing--;
            status = 503;
            answer = "{\"error_code\": 50301}";
          } else if (path.equals("/subjects/ticks-value/versions")) {
            Map<?, ?> request = json.readValue(body, Map.class);
            assertThat(request.get("schemaType")).isEqualTo("AVRO");
            answer = "{\"id\": 17}";
          } else if (path.equals("/schemas/ids/17")) {
            answer =
                json.writeValueAsString(Map.of("schema", PriceTick.getClassSchema().toString()));
          } else if (path.equals("/subjects/bad-value/versions")) {
            status = 409;
            answer = "{\"error_code\": 409, \"message\": \"Incompatible schema\"}";
          } else {
            status = 404;
            answer = "{\"error_code\": 40401}";
          }
          byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(status, bytes.length);
          exchange.getResponseBody().write(bytes);
          exchange.close();
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @Test
  void registersOnceAndAnswersLaterAsksFromItsCache() {
    RestSchemaRegistry registry = new RestSchemaRegistry(url());
    assertThat(registry.register("ticks-value", PriceTick.getClassSchema())).isEqualTo(17);
    assertThat(registry.register("ticks-value", PriceTick.getClassSchema())).isEqualTo(17);
    assertThat(registry.schemaById(17)).isEqualTo(PriceTick.getClassSchema());
    assertThat(requests).containsExactly("POST /subjects/ticks-value/versions");
  }

  @Test
  void fetchesUnknownIdsOnce() {
    RestSchemaRegistry registry = new RestSchemaRegistry(url());
    assertThat(registry.schemaById(17)).isEqualTo(PriceTick.getClassSchema());
    registry.schemaById(17);
    assertThat(requests).containsExactly("GET /schemas/ids/17");
  }

  @Test
  void aRefusalNamesTheSubjectAndTheRegistrysMessage() {
    RestSchemaRegistry registry = new RestSchemaRegistry(url());
    assertThatThrownBy(() -> registry.register("bad-value", PriceTick.getClassSchema()))
        .isInstanceOf(SerdeException.class)
        .hasMessageContaining("bad-value")
        .hasMessageContaining("409")
        .hasMessageContaining("Incompatible");
  }

  @Test
  void anUnreachableRegistryIsRetriedThenAClearErrorOfItsOwnKind() {
    RestSchemaRegistry registry =
        new RestSchemaRegistry("http://127.0.0.1:1", Duration.ofSeconds(1), Duration.ofMillis(700));
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> registry.schemaById(1))
        .isInstanceOf(RegistryUnavailableException.class)
        .hasMessageContaining("unreachable");
    assertThat((System.nanoTime() - t0) / 1_000_000)
        .isBetween(300L, 3000L); // it tried again meanwhile
  }

  @Test
  void aRegistryThatComesBackIsAnsweredWithoutAnError() {
    failing = 3; // 503 three times, then the real answer
    RestSchemaRegistry registry =
        new RestSchemaRegistry(url(), Duration.ofSeconds(1), Duration.ofSeconds(30));
    assertThat(registry.schemaById(17)).isEqualTo(PriceTick.getClassSchema());
    assertThat(requests).hasSize(4);
    // and once cached, an outage no longer matters
    failing = 1000;
    assertThat(registry.schemaById(17)).isEqualTo(PriceTick.getClassSchema());
    assertThat(requests).hasSize(4);
  }

  @Test
  void aNotFoundIsFinalAtOnce() {
    RestSchemaRegistry registry =
        new RestSchemaRegistry(url(), Duration.ofSeconds(1), Duration.ofSeconds(30));
    assertThatThrownBy(() -> registry.schemaById(99))
        .isInstanceOf(SerdeException.class)
        .isNotInstanceOf(RegistryUnavailableException.class)
        .hasMessageContaining("404");
    assertThat(requests).hasSize(1);
  }
}
