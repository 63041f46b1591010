package io.brokerstream.pnl;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PnlJobTest {
  @ParameterizedTest(name = "{0}: {1} ms")
  @CsvSource({
    // the reference topics change rarely: their fetches wait longer
    "ref.instruments, 1000",
    "ref.equity-starts, 1000",
    // prices and positions move the windows: theirs answer within the source's wait
    "prices.latest, 100",
    "brokerstream-orders-positions-changelog, 100",
  })
  void eachInputWaitsForItsBytesAsLongAsItsTopicAllows(String topic, String waitMs) {
    assertThat(PnlJob.fetchMaxWaitMs(PnlSettings.defaults(), topic)).isEqualTo(waitMs);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"ref.instruments, 2500", "prices.latest, 100"})
  void theReferenceWaitIsItsOwnSetting(String topic, String waitMs) {
    PnlSettings settings = PnlSettings.load(Map.of("BS_PNL_REFERENCE_FETCH_MAX_WAIT_MS", "2500"));
    assertThat(PnlJob.fetchMaxWaitMs(settings, topic)).isEqualTo(waitMs);
  }
}
