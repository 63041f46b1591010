package io.brokerstream.loadgen;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.brokerstream.kafka.ClientLogin;
import java.util.List;

/** What the load client works with, written by the Python driver as JSON. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Plan(
    @JsonProperty("gateway_url") String gatewayUrl,
    // every instance's gateway (the first is gatewayUrl); orders go to them in turn
    @JsonProperty("gateway_urls") List<String> gatewayUrls,
    @JsonProperty("bootstrap") String bootstrap,
    @JsonProperty("registry_url") String registryUrl,
    @JsonProperty("clients") List<Client> clients,
    @JsonProperty("equities") List<String> equities,
    @JsonProperty("options") List<String> options,
    @JsonProperty("option_share") double optionShare,
    @JsonProperty("seed") long seed,
    @JsonProperty("result_wait_ms") long resultWaitMs,
    @JsonProperty("max_in_flight") int maxInFlight,
    @JsonProperty("trace_one_in") int traceOneIn,
    @JsonProperty("pnl_partition_stride") int pnlPartitionStride,
    @JsonProperty("pnl_sample_one_in") int pnlSampleOneIn,
    // How long the watchers' fetches may wait on the broker (ms); 0: their own short waits, which
    // time visibility to within them. A bench that counts outcomes but times nothing through them
    // (bench cost) waits long, so the watchers cost the broker a few requests a second, not dozens.
    @JsonProperty("watch_wait_ms") int watchWaitMs,
    @JsonProperty("kafka") java.util.Map<String, String> kafka,
    // The secure profile's login files (ClientLogin): the watchers' and the order writer's, which
    // stands in for the gateway. Empty: none.
    @JsonProperty("kafka_login") String kafkaLogin,
    @JsonProperty("order_kafka_login") String orderKafkaLogin) {

  /** A member as the gateway knows it: its API key and its active accounts. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Client(
      @JsonProperty("member") String member,
      @JsonProperty("key") String key,
      @JsonProperty("accounts") List<String> accounts) {}

  /** The results watcher's fetch wait (ms): the plan's, or 20, to time visibility closely. */
  public int resultsFetchWaitMs() {
    return watchWaitMs > 0 ? watchWaitMs : 20;
  }

  /** The P&L watcher's fetch wait (ms): the plan's, or 50 (a window is a second). */
  public int pnlFetchWaitMs() {
    return watchWaitMs > 0 ? watchWaitMs : 50;
  }

  /** The watchers' client settings: the plan's extra settings and the login. */
  public java.util.Map<String, String> watcherKafka() {
    java.util.Map<String, String> out = new java.util.HashMap<>(kafka);
    ClientLogin.load(kafkaLogin).forEach((k, v) -> out.put((String) k, (String) v));
    return out;
  }

  public Plan {
    if (clients == null || clients.isEmpty()) {
      throw new IllegalArgumentException(
          "the plan names no clients (members with active accounts)");
    }
    if (equities == null || equities.isEmpty()) {
      throw new IllegalArgumentException("the plan names no equities");
    }
    options = options == null ? List.of() : options;
    gatewayUrls =
        gatewayUrls == null || gatewayUrls.isEmpty()
            ? List.of(gatewayUrl)
            : List.copyOf(gatewayUrls);
    kafka = kafka == null ? java.util.Map.of() : kafka;
    kafkaLogin = kafkaLogin == null ? "" : kafkaLogin;
    orderKafkaLogin = orderKafkaLogin == null ? "" : orderKafkaLogin;
    resultWaitMs = resultWaitMs <= 0 ? 10_000 : resultWaitMs;
    maxInFlight = maxInFlight <= 0 ? 4_000 : maxInFlight;
    pnlPartitionStride = pnlPartitionStride <= 0 ? 2 : pnlPartitionStride;
    // one record per equity per window: every record of the watched partitions is sampled
    pnlSampleOneIn = pnlSampleOneIn <= 0 ? 1 : pnlSampleOneIn;
  }
}
