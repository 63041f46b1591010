package io.brokerstream.connect.convert;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.connect.convert.RegistryFaultsConverter.RegistryUnavailableError;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.storage.Converter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RegistryFaultsConverterTest {

  /** A registry client's exception with an HTTP status, as Confluent's and Apicurio's carry. */
  static final class HttpError extends RuntimeException {
    private final int status;

    HttpError(int status) {
      super("HTTP " + status);
      this.status = status;
    }

    public int getStatus() {
      return status;
    }
  }

  /** The shape of Apicurio's client exception: an error bean, a status only when an answer came. */
  static final class ClientError extends RuntimeException {
    public static final class Body {
      private final Integer code;

      Body(Integer code) {
        this.code = code;
      }

      public Integer getErrorCode() {
        return code;
      }
    }

    private final Body body;

    ClientError(Integer code) {
      body = new Body(code);
    }

    public Body getError() {
      return body;
    }
  }

  /** As Avro's InvalidNumberEncodingException: an IOException the record's bytes cause. */
  static final class CorruptBody extends IOException {}

  static Stream<Arguments> errors() {
    return Stream.of(
        Arguments.of("refused", new DataException("x", new ConnectException("refused")), true),
        Arguments.of("timed out", new SerializationException(new SocketTimeoutException()), true),
        Arguments.of(
            "unchecked I/O",
            new RuntimeException(new UncheckedIOException(new ConnectException())),
            true),
        Arguments.of("server error", new SerializationException(new HttpError(503)), true),
        Arguments.of("too many requests", new HttpError(429), true),
        Arguments.of("request timeout", new HttpError(408), true),
        Arguments.of("unknown schema id", new SerializationException(new HttpError(404)), false),
        Arguments.of("bad request", new HttpError(400), false),
        Arguments.of("body ends early", new DataException(new EOFException()), false),
        Arguments.of(
            "not the wire format", new SerializationException("Unknown magic byte!"), false),
        Arguments.of("value does not fit", new DataException("not a struct"), false),
        Arguments.of("no answer (Apicurio)", new ClientError(null), true),
        Arguments.of("server error (Apicurio)", new ClientError(500), true),
        Arguments.of("unknown content id (Apicurio)", new ClientError(404), false),
        Arguments.of("refused by the registry", new HttpError(401), true),
        Arguments.of("a 4xx as Confluent reports it", new ConfigException("Unauthorized"), true),
        Arguments.of(
            "connection cut short", new SerializationException(new IOException("closed")), true),
        Arguments.of(
            "corrupt body (an IOException, not a network one)",
            new DataException(new CorruptBody()),
            false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("errors")
  void whoseFaultAnErrorIs(String what, RuntimeException e, boolean worlds) {
    assertThat(RegistryFaults.worldsFault(e)).isEqualTo(worlds);
  }

  /** A delegate that throws what it is told to, or converts. */
  static final class Scripted implements Converter {
    final AtomicReference<RuntimeException> fails = new AtomicReference<>();

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {}

    @Override
    public byte[] fromConnectData(String topic, Schema schema, Object value) {
      throwIfTold();
      return new byte[] {1};
    }

    @Override
    public SchemaAndValue toConnectData(String topic, byte[] value) {
      throwIfTold();
      return new SchemaAndValue(Schema.STRING_SCHEMA, "ok");
    }

    private void throwIfTold() {
      RuntimeException e = fails.get();
      if (e != null) {
        throw e;
      }
    }
  }

  /** A clock the waits move on, and the waits taken. */
  static final class FakeTime implements RegistryFaultsConverter.Sleeper {
    final AtomicLong now = new AtomicLong(1_000);
    final List<Long> waits = new ArrayList<>();
    Runnable atEachWait = () -> {};

    @Override
    public void sleep(long ms) {
      waits.add(ms);
      now.addAndGet(ms);
      atEachWait.run();
    }
  }

  @Test
  void aRegistryFaultIsWaitedOutInsideTheConverterAndTheRecordConverts() {
    FakeTime time = new FakeTime();
    RegistryFaultsConverter c = new RegistryFaultsConverter(time.now::get, time);
    Scripted d = new Scripted();
    c.wrap(d, 60_000);
    d.fails.set(new DataException("x", new ConnectException("Connection refused")));
    time.atEachWait =
        () -> {
          if (time.waits.size() == 4) {
            d.fails.set(null); // the registry is back
          }
        };
    assertThat(c.toConnectData("t", new byte[] {0}).value()).isEqualTo("ok");
    // doubling waits inside the converter: nothing is handed to Connect, whose retries a stop ends
    assertThat(time.waits).containsExactly(200L, 400L, 800L, 1_600L);
  }

  @Test
  void pastItsBoundARegistryFaultIsAnErrorConnectDoesNotTolerate() {
    FakeTime time = new FakeTime();
    RegistryFaultsConverter c = new RegistryFaultsConverter(time.now::get, time);
    Scripted d = new Scripted();
    c.wrap(d, 30_000);
    d.fails.set(new SerializationException(new HttpError(503)));
    assertThatThrownBy(() -> c.fromConnectData("t", Schema.STRING_SCHEMA, "v"))
        .isInstanceOf(RegistryUnavailableError.class)
        .hasMessageContaining("registry.fault.timeout.ms 30000");
    assertThat(time.waits).allMatch(w -> w <= RegistryFaultsConverter.LONGEST_WAIT_MS);
    // each record's wait is timed from its own first fault
    d.fails.set(null);
    assertThat(c.toConnectData("t", new byte[] {0}).value()).isEqualTo("ok");
  }

  @Test
  void aRecordsOwnErrorPassesThroughToBeDeadLettered() {
    RegistryFaultsConverter c = new RegistryFaultsConverter();
    Scripted d = new Scripted();
    c.wrap(d, 0);
    SerializationException own = new SerializationException("Unknown magic byte!");
    d.fails.set(own);
    assertThatThrownBy(() -> c.toConnectData("t", new byte[] {9})).isSameAs(own);
  }

  static Map<String, Object> apicurio(int port) {
    Map<String, Object> s = new HashMap<>();
    s.put(RegistryFaultsConverter.DELEGATE, "io.apicurio.registry.utils.converter.AvroConverter");
    s.put("apicurio.registry.url", "http://127.0.0.1:" + port + "/apis/registry/v2");
    s.put("apicurio.registry.as-confluent", "true");
    s.put("apicurio.registry.use-id", "contentId");
    s.put("apicurio.registry.headers.enabled", "false");
    return s;
  }

  static int closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test
  void apicuriosConverterAgainstARegistryThatIsDownWaitsInsteadOfDeadLettering() throws Exception {
    FakeTime time = new FakeTime();
    RegistryFaultsConverter c = new RegistryFaultsConverter(time.now::get, time);
    Map<String, Object> settings = apicurio(closedPort());
    settings.put(RegistryFaultsConverter.FAULT_TIMEOUT_MS, "1000");
    c.configure(settings, false);
    // the Confluent wire format: magic byte 0, a 4-byte schema id the converter has never seen, a
    // body
    byte[] record = {0, 0, 0, 0, 42, 2, 'x'};
    assertThatThrownBy(() -> c.toConnectData("order-results", record))
        .isInstanceOf(RegistryUnavailableError.class);
    assertThat(time.waits)
        .hasSizeGreaterThan(1); // tried again, not handed to Connect as the record's
    c.close();
  }

  @Test
  void apicuriosConverterRefusesBytesThatAreNotTheWireFormatAsTheRecordsOwn() throws Exception {
    RegistryFaultsConverter c = new RegistryFaultsConverter();
    c.configure(apicurio(closedPort()), false);
    assertThatThrownBy(() -> c.toConnectData("order-results", new byte[] {7, 7}))
        .isInstanceOf(RuntimeException.class); // not an Error: Connect dead-letters it
    c.close();
  }

  @Test
  void withoutADelegateItIsAConfigurationError() {
    assertThatThrownBy(() -> new RegistryFaultsConverter().configure(Map.of(), false))
        .hasMessageContaining("delegate");
  }
}
