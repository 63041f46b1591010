package io.brokerstream.baseline;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The baseline's settings: documented defaults (baseline-defaults.properties), then an optional
 * file, then BASELINE_* environment variables. Only keys with a default exist: a misspelt override
 * fails.
 */
public final class BaselineSettings {
  private final Properties values;

  private BaselineSettings(Properties values) {
    this.values = values;
  }

  public static BaselineSettings load(Path file, Map<String, String> env) {
    Properties p = new Properties();
    try (InputStream in =
        BaselineSettings.class.getResourceAsStream("/baseline-defaults.properties")) {
      p.load(in);
    } catch (IOException | NullPointerException e) {
      throw new IllegalStateException("baseline-defaults.properties is missing from the jar", e);
    }
    if (file != null) {
      Properties fromFile = new Properties();
      try (Reader in = Files.newBufferedReader(file)) {
        fromFile.load(in);
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "cannot read settings file " + file + ": " + e.getMessage(), e);
      }
      for (String key : fromFile.stringPropertyNames()) {
        if (!p.containsKey(key)) {
          throw new IllegalArgumentException("unknown setting " + key + " in " + file);
        }
        p.setProperty(key, fromFile.getProperty(key));
      }
    }
    for (String key : p.stringPropertyNames()) {
      String fromEnv = env.get(envName(key));
      if (fromEnv != null) {
        p.setProperty(key, fromEnv);
      }
    }
    return new BaselineSettings(p);
  }

  public static BaselineSettings of(Map<String, String> overrides) {
    BaselineSettings defaults = load(null, Map.of());
    overrides.forEach(defaults.values::setProperty);
    return defaults;
  }

  static String envName(String key) {
    return "BASELINE_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  public String get(String key) {
    String value = values.getProperty(key);
    if (value == null) {
      throw new IllegalArgumentException("missing setting " + key);
    }
    return value.trim();
  }

  public int getInt(String key, int min) {
    int value;
    try {
      value = Integer.parseInt(get(key));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "setting " + key + " must be an integer, got '" + get(key) + "'");
    }
    if (value < min) {
      throw new IllegalArgumentException(
          "setting " + key + " must be at least " + min + ", got " + value);
    }
    return value;
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
    String v = get(key).toLowerCase(Locale.ROOT);
    if (!v.equals("true") && !v.equals("false")) {
      throw new IllegalArgumentException(
          "setting " + key + " must be true or false, got '" + get(key) + "'");
    }
    return Boolean.parseBoolean(v);
  }

  /** A SQL identifier we put in statements ourselves: letters, digits and underscores only. */
  public String identifier(String key) {
    String v = get(key);
    if (!v.matches("[a-z_][a-z0-9_]{0,62}")) {
      throw new IllegalArgumentException(
          "setting " + key + " must be a lower-case SQL identifier, got '" + v + "'");
    }
    return v;
  }
}
