package io.brokerstream.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class PlanTest {
  private static final String BASE =
      "{\"gateway_url\": \"http://127.0.0.1:1\", \"bootstrap\": \"b\", \"registry_url\": \"r\","
          + " \"clients\": [{\"member\": \"M1\", \"key\": \"k1\", \"accounts\": [\"A1\"]}],"
          + " \"equities\": [\"EQ1\"]";

  private static Plan read(String extra) throws Exception {
    return new ObjectMapper().readValue(BASE + extra + "}", Plan.class);
  }

  @Test
  void watchersWaitBrieflyUnlessThePlanSaysHowLong() throws Exception {
    Plan timing = read("");
    assertThat(timing.resultsFetchWaitMs()).isEqualTo(20);
    assertThat(timing.pnlFetchWaitMs()).isEqualTo(50);
    Plan counting = read(", \"watch_wait_ms\": 500");
    assertThat(counting.resultsFetchWaitMs()).isEqualTo(500);
    assertThat(counting.pnlFetchWaitMs()).isEqualTo(500);
  }
}
