package io.brokerstream.streams.errors;

import io.brokerstream.rules.BoundedLetters;
import io.brokerstream.serde.RegistryUnavailableException;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.streams.errors.DeserializationExceptionHandler;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A record that cannot be read (not Avro, unknown schema, truncated) goes to dlq.streams with its
 * cause. One that cannot be read only because the schema registry stayed unreachable is not the
 * record's fault: the thread fails instead (and is replaced), and the record is read again from the
 * last commit.
 */
public final class DeadLetterOnDeserializationError implements DeserializationExceptionHandler {
  private static final Logger log = LoggerFactory.getLogger(DeadLetterOnDeserializationError.class);
  private DeadLetters letters;

  @Override
  public void configure(Map<String, ?> configs) {
    letters = DeadLetters.fromConfigs(configs);
  }

  @Override
  public Response handleError(
      ErrorHandlerContext context, ConsumerRecord<byte[], byte[]> record, Exception exception) {
    for (Throwable t = exception; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof RegistryUnavailableException) {
        log.error(
            "cannot read {}/{}/{}: the schema registry is unavailable; failing rather than dead-lettering a "
                + "valid record",
            record.topic(),
            record.partition(),
            record.offset(),
            exception);
        return Response.fail();
      }
    }
    log.warn(
        "dead-lettering unreadable record {}/{}/{}: {}",
        record.topic(),
        record.partition(),
        record.offset(),
        BoundedLetters.describe(exception));
    try {
      return Response.resume(
          List.of(
              letters.of(
                  record.topic(),
                  record.partition(),
                  record.offset(),
                  record.key(),
                  record.value(),
                  exception)));
    } catch (RuntimeException e) {
      log.error("cannot build the dead letter; stopping rather than losing the record", e);
      return Response.fail();
    }
  }
}
