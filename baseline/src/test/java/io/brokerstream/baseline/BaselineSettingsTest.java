package io.brokerstream.baseline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BaselineSettingsTest {
  @TempDir Path dir;

  @Test
  void aFileOverridesTheDefaultsAndTheEnvironmentOverridesTheFile() throws IOException {
    Path file = dir.resolve("b.properties");
    Files.writeString(file, "orders.threads=3\ndb.pool-size=10\n");
    BaselineSettings s = BaselineSettings.load(file, Map.of("BASELINE_DB_POOL_SIZE", "7"));
    assertThat(s.getInt("orders.threads", 1)).isEqualTo(3);
    assertThat(s.getInt("db.pool-size", 1)).isEqualTo(7);
    assertThat(s.get("topics.orders")).isEqualTo("orders");
  }

  @Test
  void aMisspeltKeyInTheFileIsRefusedNotIgnored() throws IOException {
    Path file = dir.resolve("b.properties");
    Files.writeString(file, "order.threads=3\n");
    assertThatThrownBy(() -> BaselineSettings.load(file, Map.of()))
        .hasMessageContaining("unknown setting order.threads");
  }

  @Test
  void numbersAndSwitchesAreChecked() {
    assertThatThrownBy(
            () -> BaselineSettings.of(Map.of("orders.threads", "0")).getInt("orders.threads", 1))
        .hasMessageContaining("at least 1");
    assertThatThrownBy(
            () -> BaselineSettings.of(Map.of("orders.threads", "four")).getInt("orders.threads", 1))
        .hasMessageContaining("integer");
    assertThatThrownBy(
            () ->
                BaselineSettings.of(Map.of("orders.parallel-lookups", "yes"))
                    .getBoolean("orders.parallel-lookups"))
        .hasMessageContaining("true or false");
  }

  @Test
  void theSchemaNameGoesIntoStatementsSoOnlyAPlainIdentifierIsTaken() {
    assertThat(BaselineSettings.of(Map.of("db.schema", "eq1_baseline")).identifier("db.schema"))
        .isEqualTo("eq1_baseline");
    for (String bad : new String[] {"x; DROP TABLE members", "Baseline", "a-b", "", "1abc"}) {
      assertThatThrownBy(
              () -> BaselineSettings.of(Map.of("db.schema", bad)).identifier("db.schema"))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void environmentNamesFollowTheKeys() {
    assertThat(BaselineSettings.envName("db.pool-size")).isEqualTo("BASELINE_DB_POOL_SIZE");
  }
}
