package io.brokerstream.streams.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.avro.ApiKey;
import io.brokerstream.avro.Member;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ApiKeysTest {
  private final Map<String, ApiKey> keys = new HashMap<>();
  private final Map<String, Member> members = new HashMap<>();
  private final ApiKeys apiKeys = new ApiKeys(keys::get, members::get);

  private void key(String secret, String member, String status) {
    String hash = ApiKeys.sha256(secret);
    keys.put(
        hash,
        ApiKey.newBuilder()
            .setKeySha256(hash)
            .setKeyId("k_" + hash.substring(0, 12))
            .setMemberId(member)
            .setLabel("test")
            .setStatus(status)
            .build());
  }

  private void member(String id, String status) {
    members.put(
        id,
        Member.newBuilder()
            .setMemberId(id)
            .setName(id)
            .setStatus(status)
            .setCreditLimit(new BigDecimal("1.000000"))
            .build());
  }

  private int refusal(String presented) {
    try {
      apiKeys.memberOf(presented);
      return 200;
    } catch (HttpError e) {
      return e.status;
    }
  }

  @Test
  void anActiveKeyOfAnActiveMemberSpeaksForThatMember() {
    member("M1", "ACTIVE");
    key("bsk_secret", "M1", "ACTIVE");
    assertThat(apiKeys.memberOf("bsk_secret")).isEqualTo("M1");
  }

  @Test
  void unknownRevokedAndMissingKeysAre401AlikeSuspendedMembers403() {
    member("M1", "ACTIVE");
    member("M2", "SUSPENDED");
    key("revoked", "M1", "REVOKED");
    key("suspended", "M2", "ACTIVE");
    key("orphan", "M9", "ACTIVE");
    assertThat(refusal(null)).isEqualTo(401);
    assertThat(refusal(" ")).isEqualTo(401);
    assertThat(refusal("nobody")).isEqualTo(401);
    assertThat(refusal("revoked")).isEqualTo(401);
    assertThatThrownBy(() -> apiKeys.memberOf("revoked")).hasMessage("unknown or revoked API key");
    assertThatThrownBy(() -> apiKeys.memberOf("nobody")).hasMessage("unknown or revoked API key");
    assertThat(refusal("suspended")).isEqualTo(403);
    assertThat(refusal("orphan")).isEqualTo(403);
  }

  @Test
  void onlyTheHashIsLookedUp() {
    member("M1", "ACTIVE");
    key("bsk_x", "M1", "ACTIVE");
    String hash = ApiKeys.sha256("bsk_x");
    assertThat(hash).hasSize(64).doesNotContain("bsk_x");
    assertThat(refusal(hash))
        .isEqualTo(401); // presenting the stored hash is not presenting the key
  }

  @Test
  void each_hash_is_sha256_of_its_key_alone_whatever_was_hashed_before_on_the_thread() {
    String abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    String empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    assertThat(ApiKeys.sha256("abc")).isEqualTo(abc);
    assertThat(ApiKeys.sha256("")).isEqualTo(empty);
    assertThat(ApiKeys.sha256("abc")).isEqualTo(abc);
  }
}
