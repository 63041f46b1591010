package io.brokerstream.streams.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RequestInputTest {
  @Test
  void aSegmentIsDecodedExactlyOnce() {
    assertThat(RequestInput.segment("50%25", "id")).isEqualTo("50%");
    assertThat(RequestInput.segment("a%2525", "id")).isEqualTo("a%25");
    assertThat(RequestInput.segment("a+b", "id")).isEqualTo("a+b");
    assertThat(RequestInput.segment("%C3%A9t%C3%A9", "id")).isEqualTo("été");
    assertThat(RequestInput.segment("M000001", "id")).isEqualTo("M000001");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"50%", "50%2", "%zz", "%C3", "%FF%FE", "a%00b", "%0A", "%7F", "", "%C2%85"})
  void malformedOrControlSegmentsAre400(String raw) {
    assertThatThrownBy(() -> RequestInput.segment(raw, "order id"))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status).isEqualTo(400));
  }

  @Test
  void controlCharactersAreSpotted() {
    assertThat(RequestInput.hasControl("ok-1")).isFalse();
    assertThat(RequestInput.hasControl("a\tb")).isTrue();
    assertThat(RequestInput.hasControl("a\u0085b")).isTrue();
  }
}
