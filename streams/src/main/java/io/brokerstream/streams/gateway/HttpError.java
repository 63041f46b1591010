package io.brokerstream.streams.gateway;

/** An answer other than 2xx, with the field it is about when there is one. */
final class HttpError extends RuntimeException {
  final int status;
  final String field;

  HttpError(int status, String message) {
    this(status, message, null);
  }

  HttpError(int status, String message, String field) {
    super(message);
    this.status = status;
    this.field = field;
  }

  static HttpError badField(String field, String message) {
    return new HttpError(400, field + ": " + message, field);
  }
}
