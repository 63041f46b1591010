package io.brokerstream.pricing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class MarketModelTest {
  @Test
  void theModelIsTheFilesValues() throws Exception {
    Properties file = new Properties();
    try (var in = Files.newBufferedReader(Path.of("src/main/resources/market-model.properties"))) {
      file.load(in);
    }
    MarketModel model = MarketModel.load();
    assertEquals(Double.parseDouble(file.getProperty("rate")), model.rate());
    assertEquals(Integer.parseInt(file.getProperty("binomial-steps")), model.binomialSteps());
    assertEquals(model.rate(), model.pricer().rate());
  }

  @Test
  void anAbsurdModelIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new MarketModel(Double.NaN, 100));
    assertThrows(IllegalArgumentException.class, () -> new MarketModel(5.0, 100));
    assertThrows(IllegalArgumentException.class, () -> new MarketModel(0.05, 0));
  }
}
