package io.brokerstream.serde;

/** A record could not be encoded or decoded: bad framing, unknown schema id, registry refusal. */
public class SerdeException extends RuntimeException {
  public SerdeException(String message) {
    super(message);
  }

  public SerdeException(String message, Throwable cause) {
    super(message, cause);
  }
}
