package io.brokerstream.streams.gateway;

import io.brokerstream.avro.Member;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Which member an API key belongs to: keys configured for the gateway, and keys whose SHA-256 a
 * member's reference data holds. The hash index is rebuilt from the members store at most once a
 * second, on a miss, so a key added in Postgres works within about a second of reaching Kafka.
 */
final class ApiKeys {
  private final Map<String, String> configured;
  private final Supplier<Iterable<Member>> members;
  private volatile Map<String, String> byHash = Map.of();
  private volatile long builtAt;

  ApiKeys(Map<String, String> configured, Supplier<Iterable<Member>> members) {
    this.configured = Map.copyOf(configured);
    this.members = members;
  }

  /** The member of this key, or null. */
  String memberOf(String apiKey) {
    if (apiKey == null || apiKey.isBlank()) {
      return null;
    }
    String member = configured.get(apiKey);
    if (member != null) {
      return member;
    }
    String hash = sha256(apiKey);
    member = byHash.get(hash);
    if (member == null && System.currentTimeMillis() - builtAt > 1000) {
      rebuild();
      member = byHash.get(hash);
    }
    return member;
  }

  private synchronized void rebuild() {
    Map<String, String> index = new HashMap<>();
    for (Member m : members.get()) {
      if (m.getApiKeySha256() != null) {
        index.put(m.getApiKeySha256(), m.getMemberId());
      }
    }
    byHash = index;
    builtAt = System.currentTimeMillis();
  }

  static String sha256(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
