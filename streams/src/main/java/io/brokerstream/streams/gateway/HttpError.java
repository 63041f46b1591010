package io.brokerstream.streams.gateway;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An answer other than 2xx, with the field it is about when there is one, and headers it must
 * carry.
 */
final class HttpError extends RuntimeException {
  final int status;
  final String field;
  final Map<String, String> headers = new LinkedHashMap<>();

  HttpError(int status, String message) {
    this(status, message, null);
  }

  HttpError(int status, String message, String field) {
    super(message, null, false, false);
    this.status = status;
    this.field = field;
  }

  static HttpError badField(String field, String message) {
    return new HttpError(400, field + ": " + message, field);
  }

  HttpError with(String header, String value) {
    headers.put(header, value);
    return this;
  }
}
