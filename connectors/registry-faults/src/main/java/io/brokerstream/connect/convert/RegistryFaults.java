package io.brokerstream.connect.convert;

import java.io.CharConversionException;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashSet;
import java.util.Set;

/**
 * Whose fault a converter's error is. The world's: the registry cannot be reached or answers with a
 * server error (an I/O failure anywhere in the cause chain, or an HTTP status of 5xx, 408 or 429 on
 * a client's exception; Apicurio's client exception without a status, which is how it reports no
 * answer at all). Everything else is the record's own: bytes that are not the wire format, an Avro
 * body that ends early, a schema id the registry does not know (404), a value that does not fit its
 * schema. Those are dead-lettered; the world's are waited out.
 */
final class RegistryFaults {
  private RegistryFaults() {}

  static boolean worldsFault(Throwable e) {
    Set<Throwable> seen = new HashSet<>();
    for (Throwable t = e; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof EOFException || t instanceof CharConversionException) {
        return false; // the record's bytes end early or are not text: its own
      }
      if (t instanceof IOException || t instanceof UncheckedIOException) {
        return true; // refused, reset, timed out, a name that does not resolve
      }
      Object error = call(t, "getError");
      if (error != null) {
        // Apicurio's client: an error body it read, or one it made up when no answer came (then it
        // names the I/O exception, which it does not chain, and carries no status)
        Integer status = number(call(error, "getErrorCode"));
        return status == null || serverSide(status);
      }
      Integer status = httpStatus(t);
      if (status != null) {
        return serverSide(status);
      }
    }
    return false;
  }

  private static boolean serverSide(int status) {
    return status >= 500 || status == 408 || status == 429;
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
