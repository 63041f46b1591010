package io.brokerstream.pnl;

import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The job's settings: pnl.properties defaults, then BS_PNL_* environment variables, then
 * --key=value arguments.
 */
public final class PnlSettings implements Serializable {
  private static final long serialVersionUID = 1L;
  private final Properties values;

  private PnlSettings(Properties values) {
    this.values = values;
  }

  public static PnlSettings load(Map<String, String> environment, String... args) {
    Properties p = new Properties();
    try (InputStream in = PnlSettings.class.getResourceAsStream("/pnl.properties")) {
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (String key : p.stringPropertyNames()) {
      String env =
          environment.get(
              "BS_PNL_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_'));
      if (env != null) {
        p.setProperty(key, env);
      }
    }
    for (String arg : args) {
      if (!arg.startsWith("--") || !arg.contains("=")) {
        throw new IllegalArgumentException("expected --key=value, got " + arg);
      }
      String key = arg.substring(2, arg.indexOf('='));
      if (!p.containsKey(key)) {
        throw new IllegalArgumentException(
            "unknown setting " + key + "; known: " + p.stringPropertyNames());
      }
      p.setProperty(key, arg.substring(arg.indexOf('=') + 1));
    }
    return new PnlSettings(p);
  }

  public static PnlSettings defaults() {
    return load(Map.of());
  }

  public PnlSettings with(String key, String value) {
    Properties copy = new Properties();
    copy.putAll(values);
    copy.setProperty(key, value);
    return new PnlSettings(copy);
  }

  public String get(String key) {
    String v = values.getProperty(key);
    if (v == null) {
      throw new IllegalArgumentException("no setting " + key);
    }
    return v.trim();
  }

  public long getLong(String key) {
    return Long.parseLong(get(key));
  }

  public int getInt(String key) {
    return Integer.parseInt(get(key));
  }

  public double getDouble(String key) {
    return Double.parseDouble(get(key));
  }

  /** true or false, nothing else: a typo must not silently read as false. */
  public boolean getBoolean(String key) {
    String v = get(key);
    if (!v.equals("true") && !v.equals("false")) {
      throw new IllegalArgumentException("setting " + key + " must be true or false, not " + v);
    }
    return Boolean.parseBoolean(v);
  }
}
