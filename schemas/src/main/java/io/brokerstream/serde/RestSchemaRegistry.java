package io.brokerstream.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;

/**
 * A client of the Confluent schema registry REST API (Apicurio serves it under /apis/ccompat/v7).
 * Every answer is cached: a subject/schema pair maps to one id for good, and an id to one schema,
 * so the registry is asked once per schema per process, not once per record, and an outage is felt
 * only by a schema this process has not met yet.
 *
 * <p>A registry that cannot be reached, times out or answers 5xx is asked again with backoff (0.1 s
 * doubling to 5 s) for up to {@code retryFor} (2 minutes by default); after that the call fails
 * with {@link RegistryUnavailableException}, which callers must not treat as a bad record. A 4xx
 * answer (an unknown id, an incompatible schema) is final at once.
 */
public final class RestSchemaRegistry implements SchemaRegistry {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";

  private final String baseUrl;
  private final HttpClient http;
  private final Duration timeout;
  private final Duration retryFor;
  private final Map<String, Integer> idsBySubjectSchema = new ConcurrentHashMap<>();
  private final Map<Integer, Schema> schemasById = new ConcurrentHashMap<>();

  public RestSchemaRegistry(String baseUrl) {
    this(baseUrl, Duration.ofSeconds(10), Duration.ofMinutes(2));
  }

  public RestSchemaRegistry(String baseUrl, Duration timeout, Duration retryFor) {
    this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.timeout = timeout;
    this.retryFor = retryFor;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  public String baseUrl() {
    return baseUrl;
  }

  @Override
  public int register(String subject, Schema schema) {
    return idsBySubjectSchema.computeIfAbsent(
        key(subject, schema),
        k ->
            post(
                "/subjects/" + encode(subject) + "/versions", schema, "register under " + subject));
  }

  @Override
  public int lookup(String subject, Schema schema) {
    return idsBySubjectSchema.computeIfAbsent(
        key(subject, schema),
        k -> post("/subjects/" + encode(subject), schema, "look up under " + subject));
  }

  @Override
  public Schema schemaById(int id) {
    return schemasById.computeIfAbsent(
        id,
        i -> {
          JsonNode body =
              send(
                  HttpRequest.newBuilder(URI.create(baseUrl + "/schemas/ids/" + i)).GET(),
                  "fetch schema id " + i);
          return new Schema.Parser().parse(body.get("schema").asText());
        });
  }

  private int post(String path, Schema schema, String what) {
    String payload;
    try {
      payload = JSON.writeValueAsString(Map.of("schema", schema.toString(), "schemaType", "AVRO"));
    } catch (IOException e) {
      throw new SerdeException("cannot encode request to " + what, e);
    }
    JsonNode body =
        send(
            HttpRequest.newBuilder(URI.create(baseUrl + path))
                .header("Content-Type", CONTENT_TYPE)
                .POST(HttpRequest.BodyPublishers.ofString(payload)),
            what);
    JsonNode id = body.get("id");
    if (id == null || !id.canConvertToInt()) {
      throw new SerdeException("registry answered without an id to " + what + ": " + body);
    }
    int schemaId = id.intValue();
    schemasById.putIfAbsent(schemaId, schema);
    return schemaId;
  }

  private JsonNode send(HttpRequest.Builder request, String what) {
    HttpRequest built = request.timeout(timeout).header("Accept", CONTENT_TYPE).build();
    long deadline = System.nanoTime() + retryFor.toNanos();
    long backoffMs = 100;
    HttpResponse<String> response;
    while (true) {
      String failure;
      Exception cause = null;
      try {
        response = http.send(built, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 != 5) {
          break;
        }
        failure = "HTTP " + response.statusCode() + " " + response.body();
      } catch (IOException e) {
        failure = e.toString();
        cause = e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new RegistryUnavailableException(
            "interrupted while asking the schema registry to " + what, e);
      }
      if (System.nanoTime() + backoffMs * 1_000_000 > deadline) {
        throw new RegistryUnavailableException(
            "schema registry "
                + baseUrl
                + " unreachable to "
                + what
                + " for "
                + retryFor.toSeconds()
                + " s: "
                + failure,
            cause);
      }
      sleep(backoffMs);
      backoffMs = Math.min(5000, backoffMs * 2);
    }
    if (response.statusCode() / 100 != 2) {
      throw new SerdeException(
          "schema registry refused to "
              + what
              + ": HTTP "
              + response.statusCode()
              + " "
              + response.body());
    }
    try {
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new SerdeException(
          "schema registry sent unreadable JSON to " + what + ": " + response.body(), e);
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RegistryUnavailableException(
          "interrupted while waiting for the schema registry", e);
    }
  }

  private static String key(String subject, Schema schema) {
    return subject + '\u0000' + schema.toString();
  }

  private static String encode(String subject) {
    return URLEncoder.encode(subject, StandardCharsets.UTF_8);
  }
}
