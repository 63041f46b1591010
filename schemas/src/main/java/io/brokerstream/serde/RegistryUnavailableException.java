package io.brokerstream.serde;

/**
 * The schema registry could not be reached (or answered 5xx) for longer than the client retries:
 * the record is fine, the registry is not. Nothing may dead-letter a record for this; fail and
 * retry it.
 */
public final class RegistryUnavailableException extends SerdeException {
  public RegistryUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
