package io.brokerstream.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClientLoginTest {
  @TempDir Path dir;

  @Test
  void noFileMeansNoLogin() {
    assertTrue(ClientLogin.load(null).isEmpty());
    assertTrue(ClientLogin.load("  ").isEmpty());
  }

  @Test
  void readsTheLoginWithItsQuotedJaasLine() throws Exception {
    Path f = dir.resolve("client.properties");
    Files.writeString(
        f,
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
            + "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"tools\" password=\"a=b\\\\c\";\n");
    var p = ClientLogin.load(f.toString());
    assertEquals("SASL_SSL", p.getProperty("security.protocol"));
    assertTrue(p.getProperty("sasl.jaas.config").endsWith("password=\"a=b\\c\";"));
  }

  @Test
  void aMissingOrEmptyFileIsAnError() throws Exception {
    assertThrows(
        IllegalArgumentException.class, () -> ClientLogin.load(dir.resolve("absent").toString()));
    Path empty = Files.writeString(dir.resolve("empty.properties"), "");
    assertThrows(IllegalArgumentException.class, () -> ClientLogin.load(empty.toString()));
  }
}
