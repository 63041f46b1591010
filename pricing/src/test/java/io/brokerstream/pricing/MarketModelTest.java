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
    assertEquals(
        Double.parseDouble(file.getProperty("american-put-horizon-years")),
        model.americanPutHorizonYears());
    assertEquals(Double.parseDouble(file.getProperty("days-per-year")), model.daysPerYear());
    assertEquals(model.rate(), model.pricer().rate());
  }

  @Test
  void anAbsurdModelIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new MarketModel(Double.NaN, 5, 365));
    assertThrows(IllegalArgumentException.class, () -> new MarketModel(5.0, 5, 365));
    assertThrows(IllegalArgumentException.class, () -> new MarketModel(0.05, 0, 365));
    assertThrows(IllegalArgumentException.class, () -> new MarketModel(0.05, Double.NaN, 365));
    assertThrows(IllegalArgumentException.class, () -> new MarketModel(0.05, 1000, 365));
    assertThrows(IllegalArgumentException.class, () -> new MarketModel(0.05, 5, 250));
  }
}
