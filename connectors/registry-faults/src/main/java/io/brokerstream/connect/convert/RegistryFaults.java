package io.brokerstream.connect.convert;

import java.io.IOException;
import java.util.HashSet;
import java.util.Set;

/**
 * Whose fault a converter's error is. The world's: the registry cannot be reached (a network
 * exception anywhere in the cause chain: java.net, javax.net, java.nio.channels, or a bare
 * IOException as HTTP clients throw for a connection cut short), it answers with a server error or
 * refuses the worker (an HTTP status of 5xx, 408, 429, 401, 403 or 407 on a client's exception;
 * Apicurio's client exception without a status, which is how it reports no answer at all;
 * Confluent's configuration errors, which is what its converter makes of a 4xx answer). Everything
 * else is the record's own: bytes that are not the wire format, an Avro body that is corrupt or
 * ends early (Avro's and Jackson's exceptions are IOExceptions too, but not network ones), a schema
 * id the registry does not know (404), a value that does not fit its schema. Those are
 * dead-lettered; the world's are waited out.
 */
final class RegistryFaults {
  private RegistryFaults() {}

  /** What Confluent's converter throws for a 4xx answer, without its status or cause. */
  private static final Set<String> CONFIG_ERRORS =
      Set.of(
          "org.apache.kafka.common.config.ConfigException",
          "org.apache.kafka.common.errors.InvalidConfigurationException");

  static boolean worldsFault(Throwable e) {
    Set<Throwable> seen = new HashSet<>();
    for (Throwable t = e; t != null && seen.add(t); t = t.getCause()) {
      if (network(t) || CONFIG_ERRORS.contains(t.getClass().getName())) {
        return true;
      }
      Object error = call(t, "getError");
      if (error != null) {
        // Apicurio's client: an error body it read, or one it made up when no answer came (then it
        // names the I/O exception, which it does not chain, and carries no status)
        Integer status = number(call(error, "getErrorCode"));
        return status == null || worlds(status);
      }
      Integer status = httpStatus(t);
      if (status != null) {
        return worlds(status);
      }
    }
    return false;
  }

  private static boolean network(Throwable t) {
    String name = t.getClass().getName();
    return name.startsWith("java.net.")
        || name.startsWith("javax.net.")
        || name.startsWith("java.nio.channels.")
        || t.getClass() == IOException.class;
  }

  private static boolean worlds(int status) {
    return status >= 500
        || status == 408
        || status == 429
        || status == 401
        || status == 403
        || status == 407;
  }

  private static Object call(Object target, String accessor) {
    try {
      return target.getClass().getMethod(accessor).invoke(target);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null; // not this client's exception
    }
  }

  private static Integer number(Object v) {
    return v instanceof Number n && n.intValue() >= 100 && n.intValue() < 600 ? n.intValue() : null;
  }

  /**
   * The HTTP status a registry client's exception carries (Confluent's getStatus, others'
   * getStatusCode), or null when it carries none.
   */
  static Integer httpStatus(Throwable t) {
    for (String name : new String[] {"getStatus", "getStatusCode"}) {
      Integer status = number(call(t, name));
      if (status != null) {
        return status;
      }
    }
    return null;
  }
}
