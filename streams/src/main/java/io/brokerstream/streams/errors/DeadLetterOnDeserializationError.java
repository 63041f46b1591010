package io.brokerstream.streams.errors;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.streams.errors.DeserializationExceptionHandler;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A record that cannot be read (not Avro, unknown schema, truncated) goes to dlq.streams with its cause. */
public final class DeadLetterOnDeserializationError implements DeserializationExceptionHandler {
  private static final Logger log = LoggerFactory.getLogger(DeadLetterOnDeserializationError.class);
  private DeadLetters letters;

  @Override
  public void configure(Map<String, ?> configs) {
    letters = DeadLetters.fromConfigs(configs);
  }

  @Override
  public Response handleError(ErrorHandlerContext context, ConsumerRecord<byte[], byte[]> record, Exception exception) {
    log.warn("dead-lettering unreadable record {}/{}/{}: {}", record.topic(), record.partition(), record.offset(),
        DeadLetters.describe(exception));
    try {
      return Response.resume(List.of(letters.of(record.topic(), record.partition(), record.offset(), record.key(),
          record.value(), exception)));
    } catch (RuntimeException e) {
      log.error("cannot build the dead letter; stopping rather than losing the record", e);
      return Response.fail();
    }
  }
}
