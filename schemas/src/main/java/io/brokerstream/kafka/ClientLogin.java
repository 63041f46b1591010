package io.brokerstream.kafka;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * A Kafka client's login (security protocol, SASL mechanism and JAAS line, trust store) read from a
 * properties file the launcher writes with mode 0600, so that no password travels on a command line
 * or in a job's arguments. No file (the plaintext profile) means no login.
 */
public final class ClientLogin {
  private ClientLogin() {}

  /** The file's properties; empty when {@code path} is null or blank. */
  public static Properties load(String path) {
    Properties p = new Properties();
    if (path == null || path.isBlank()) {
      return p;
    }
    try (Reader in = Files.newBufferedReader(Path.of(path.trim()))) {
      p.load(in);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "cannot read the Kafka client login " + path + ": " + e, e);
    }
    if (!p.containsKey("security.protocol")) {
      throw new IllegalArgumentException(
          "Kafka client login " + path + " names no security.protocol");
    }
    return p;
  }
}
