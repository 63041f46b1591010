package io.brokerstream.streams.gateway;

import io.brokerstream.avro.ApiKey;
import io.brokerstream.avro.Member;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.function.Function;

/**
 * Who a request speaks for: the member of its API key. The key is hashed (SHA-256) and looked up in
 * ref.api-keys, which Debezium keeps in step with Postgres' api_keys on every instance; the member
 * must be active. A key revoked or a member suspended in Postgres is refused here as soon as the
 * change reaches the instance (about a second), with no cache to outlive it: the lookups go through
 * the reference cache that the global store updaters invalidate.
 */
final class ApiKeys {
  // MessageDigest.getInstance looks the provider up on every call: a third of the hashing's time
  private static final ThreadLocal<MessageDigest> SHA256 =
      ThreadLocal.withInitial(
          () -> {
            try {
              return MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
              throw new IllegalStateException(e);
            }
          });

  private final Function<String, ApiKey> byHash;
  private final Function<String, Member> members;

  ApiKeys(Function<String, ApiKey> byHash, Function<String, Member> members) {
    this.byHash = byHash;
    this.members = members;
  }

  /** The member of this key; 401 for an unknown or revoked key, 403 for a member not active. */
  String memberOf(String presented) {
    if (presented == null || presented.isBlank()) {
      throw new HttpError(401, "missing API key (X-Api-Key header)");
    }
    ApiKey key = byHash.apply(sha256(presented));
    if (key == null || !"ACTIVE".equals(key.getStatus())) {
      // the same answer for both: a stranger learns nothing about which keys ever existed
      throw new HttpError(401, "unknown or revoked API key");
    }
    Member member = members.apply(key.getMemberId());
    if (member == null || !"ACTIVE".equals(member.getStatus())) {
      throw new HttpError(
          403,
          "member "
              + key.getMemberId()
              + " is "
              + (member == null ? "unknown" : member.getStatus())
              + ": its keys are not accepted");
    }
    return key.getMemberId();
  }

  static String sha256(String text) {
    // digest() resets the digest, so a thread's next key starts from nothing
    return HexFormat.of().formatHex(SHA256.get().digest(text.getBytes(StandardCharsets.UTF_8)));
  }
}
