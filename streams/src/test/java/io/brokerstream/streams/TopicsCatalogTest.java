package io.brokerstream.streams;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.streams.topology.StoreNames;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.streams.processor.internals.ProcessorStateManager;
import org.junit.jupiter.api.Test;

/** Every topic the app names is in the catalog the launcher creates topics from. */
class TopicsCatalogTest {
  private static final Pattern TOPIC = Pattern.compile("^  ([A-Za-z0-9._-]+):\\s*$");

  @Test
  void everyTopicConstantIsInPlatformTopicsYaml() throws IOException, IllegalAccessException {
    List<String> catalog = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of("..", "platform", "topics.yaml"))) {
      Matcher m = TOPIC.matcher(line);
      if (m.matches()) {
        catalog.add(m.group(1));
      }
    }
    assertThat(catalog).contains("orders", "ref.members");
    for (Field f : Topics.class.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
        assertThat(catalog).as(f.getName()).contains((String) f.get(null));
      }
    }
  }

  @Test
  void thePositionsTopicIsThePositionsStoresChangelogUnderTheDefaultApplicationId() {
    AppSettings defaults = AppSettings.load(null, Map.of());
    assertThat(Topics.POSITIONS)
        .isEqualTo(
            ProcessorStateManager.storeChangelogTopic(
                defaults.get("application.id"), StoreNames.POSITIONS, null));
  }
}
