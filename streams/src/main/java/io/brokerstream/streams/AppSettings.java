package io.brokerstream.streams;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The app's settings: documented defaults (broker-defaults.properties), then an optional file, then
 * BROKER_* environment variables. Built once in main and handed down; nothing reads them
 * statically.
 */
public final class AppSettings {
  private final Properties values;

  private AppSettings(Properties values) {
    this.values = values;
  }

  public static AppSettings load(Path file, Map<String, String> env) {
    Properties p = new Properties();
    try (InputStream in = AppSettings.class.getResourceAsStream("/broker-defaults.properties")) {
      p.load(in);
    } catch (IOException | NullPointerException e) {
      throw new IllegalStateException("broker-defaults.properties is missing from the jar", e);
    }
    if (file != null) {
      try (Reader in = Files.newBufferedReader(file)) {
        p.load(in);
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "cannot read settings file " + file + ": " + e.getMessage(), e);
      }
    }
    for (String key : p.stringPropertyNames()) {
      String fromEnv = env.get(envName(key));
      if (fromEnv != null) {
        p.setProperty(key, fromEnv);
      }
    }
    env.forEach(
        (name, value) -> {
          if (name.startsWith(
              "BROKER_STREAMS_")) { // pass-through settings cannot all be listed as defaults
            p.setProperty(
                "streams." + name.substring(15).toLowerCase(Locale.ROOT).replace('_', '.'), value);
          }
        });
    return new AppSettings(p);
  }

  public static AppSettings of(Map<String, String> overrides) {
    AppSettings defaults = load(null, Map.of());
    overrides.forEach(defaults.values::setProperty);
    return defaults;
  }

  static String envName(String key) {
    return "BROKER_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  public String get(String key) {
    String value = values.getProperty(key);
    if (value == null) {
      throw new IllegalArgumentException("missing setting " + key);
    }
    return value.trim();
  }

  public int getInt(String key) {
    try {
      return Integer.parseInt(get(key));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "setting " + key + " must be an integer, got '" + get(key) + "'");
    }
  }

  public long getLong(String key) {
    try {
      return Long.parseLong(get(key));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "setting " + key + " must be an integer, got '" + get(key) + "'");
    }
  }

  public double getDouble(String key) {
    try {
      return Double.parseDouble(get(key));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "setting " + key + " must be a number, got '" + get(key) + "'");
    }
  }

  public boolean getBoolean(String key) {
    return Boolean.parseBoolean(get(key));
  }

  /** key=member pairs, comma separated. */
  public Map<String, String> getPairs(String key) {
    Map<String, String> pairs = new HashMap<>();
    for (String item : get(key).split(",")) {
      if (item.isBlank()) {
        continue;
      }
      String[] kv = item.split("=", 2);
      if (kv.length != 2) {
        throw new IllegalArgumentException(
            "setting " + key + ": expected key=value, got '" + item + "'");
      }
      pairs.put(kv[0].trim(), kv[1].trim());
    }
    return pairs;
  }

  /** Settings passed to Kafka Streams unchanged (the `streams.` prefix removed). */
  public Map<String, String> streamsOverrides() {
    Map<String, String> out = new HashMap<>();
    for (String key : values.stringPropertyNames()) {
      if (key.startsWith("streams.")) {
        out.put(key.substring(8), values.getProperty(key));
      }
    }
    return out;
  }
}
