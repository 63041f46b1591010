package io.brokerstream.connect.convert;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.storage.Converter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry's converter, with its faults told apart from the records'. Connect tolerates (and
 * under errors.tolerance=all dead-letters) whatever a converter throws, so a registry that is down
 * when a record needs a schema the converter does not hold would dead-letter every such record:
 * fills missing from the system of record, for a fault of the world.
 *
 * <p>Here such an error is waited out inside the converter: the call is tried again after a wait
 * that doubles from 200 ms to 10 s, until it passes. Not Connect's own retries: a task that is
 * stopped (a restart, a rebalance, a connector update) ends them at once and tolerates the record,
 * dead-lettering it. A record's own error (see {@link RegistryFaults}) passes through and is
 * dead-lettered with its cause. Past {@code registry.fault.timeout.ms} of faults on one record the
 * converter throws {@link RegistryUnavailableError}, which Connect does not tolerate: the task
 * fails, loudly, rather than skip; nothing after it is written, so it comes again after a restart.
 *
 * <p>Configured as the worker's value converter with {@code value.converter.delegate} naming the
 * converter it wraps; every other {@code value.converter.*} setting is the delegate's.
 */
public final class RegistryFaultsConverter implements Converter {
  private static final Logger log = LoggerFactory.getLogger(RegistryFaultsConverter.class);

  public static final String DELEGATE = "delegate";
  public static final String FAULT_TIMEOUT_MS = "registry.fault.timeout.ms";

  /** As long as the Postgres sink waits out a fault before it fails (its retry.timeout.ms). */
  public static final long DEFAULT_FAULT_TIMEOUT_MS = 900_000;

  static final long FIRST_WAIT_MS = 200;
  static final long LONGEST_WAIT_MS = 10_000;

  /** How the converter waits between tries (tests count the waits instead). */
  interface Sleeper {
    void sleep(long ms) throws InterruptedException;
  }

  private Converter delegate;
  private long faultTimeoutMs = DEFAULT_FAULT_TIMEOUT_MS;
  private final LongSupplier clock;
  private final Sleeper sleeper;

  public RegistryFaultsConverter() {
    this(System::currentTimeMillis, Thread::sleep);
  }

  RegistryFaultsConverter(LongSupplier clock, Sleeper sleeper) {
    this.clock = clock;
    this.sleeper = sleeper;
  }

  /** The error Connect does not tolerate: a registry down for longer than the bound. */
  public static final class RegistryUnavailableError extends Error {
    RegistryUnavailableError(String message, Throwable cause) {
      super(message, cause);
    }
  }

  @Override
  public void configure(Map<String, ?> configs, boolean isKey) {
    Object name = configs.get(DELEGATE);
    if (name == null) {
      throw new org.apache.kafka.common.config.ConfigException(
          DELEGATE,
          null,
          "the converter to wrap, e.g. io.apicurio.registry.utils.converter.AvroConverter");
    }
    Object timeout = configs.get(FAULT_TIMEOUT_MS);
    if (timeout != null) {
      faultTimeoutMs = Long.parseLong(timeout.toString());
    }
    Map<String, Object> rest = new HashMap<>(configs);
    rest.remove(DELEGATE);
    rest.remove(FAULT_TIMEOUT_MS);
    try {
      // the delegate lives in the same plugin folder, so this class's loader finds it
      Class<?> type = Class.forName(name.toString(), true, getClass().getClassLoader());
      delegate = (Converter) type.getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException | ClassCastException e) {
      throw new org.apache.kafka.common.config.ConfigException(
          DELEGATE, name, "not a converter this plugin can load: " + e);
    }
    delegate.configure(rest, isKey);
  }

  /** For tests: wraps a converter already made. */
  void wrap(Converter converter, long timeoutMs) {
    delegate = converter;
    faultTimeoutMs = timeoutMs;
  }

  @Override
  public byte[] fromConnectData(String topic, Schema schema, Object value) {
    return guarded(topic, () -> delegate.fromConnectData(topic, schema, value));
  }

  @Override
  public byte[] fromConnectData(String topic, Headers headers, Schema schema, Object value) {
    return guarded(topic, () -> delegate.fromConnectData(topic, headers, schema, value));
  }

  @Override
  public SchemaAndValue toConnectData(String topic, byte[] value) {
    return guarded(topic, () -> delegate.toConnectData(topic, value));
  }

  @Override
  public SchemaAndValue toConnectData(String topic, Headers headers, byte[] value) {
    return guarded(topic, () -> delegate.toConnectData(topic, headers, value));
  }

  private <T> T guarded(String topic, Supplier<T> call) {
    long since = -1;
    long wait = FIRST_WAIT_MS;
    while (true) {
      try {
        T out = call.get();
        if (since >= 0) {
          log.info(
              "the schema registry answers again after {} s ({})",
              (clock.getAsLong() - since) / 1000,
              topic);
        }
        return out;
      } catch (RuntimeException e) {
        if (!RegistryFaults.worldsFault(e)) {
          throw e; // the record's own: Connect dead-letters it with this cause
        }
        long now = clock.getAsLong();
        if (since < 0) {
          since = now;
        }
        long waited = now - since;
        if (waited > faultTimeoutMs) {
          throw new RegistryUnavailableError(
              "the schema registry has failed for "
                  + waited / 1000
                  + " s ("
                  + FAULT_TIMEOUT_MS
                  + " "
                  + faultTimeoutMs
                  + "), converting a record of "
                  + topic
                  + ": "
                  + e,
              e);
        }
        log.warn(
            "the schema registry failed converting a record of {} ({} s so far): trying again in"
                + " {} ms, not dead-lettering: {}",
            topic,
            waited / 1000,
            wait,
            e.toString());
        try {
          sleeper.sleep(wait);
        } catch (InterruptedException stop) {
          Thread.currentThread().interrupt();
          throw new RegistryUnavailableError(
              "interrupted while waiting for the schema registry (" + topic + ")", e);
        }
        wait = Math.min(wait * 2, LONGEST_WAIT_MS);
      }
    }
  }

  @Override
  public ConfigDef config() {
    return new ConfigDef()
        .define(
            DELEGATE,
            ConfigDef.Type.STRING,
            ConfigDef.Importance.HIGH,
            "the converter wrapped (its settings are this one's others)")
        .define(
            FAULT_TIMEOUT_MS,
            ConfigDef.Type.LONG,
            DEFAULT_FAULT_TIMEOUT_MS,
            ConfigDef.Importance.MEDIUM,
            "how long registry faults are waited out before the task fails");
  }

  @Override
  public void close() throws IOException {
    if (delegate != null) {
      delegate.close();
    }
  }
}
