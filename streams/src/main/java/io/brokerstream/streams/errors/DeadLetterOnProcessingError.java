package io.brokerstream.streams.errors;

import io.brokerstream.rules.BoundedLetters;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A record the order processor throws on (before it changes any state) goes to dlq.streams with its
 * original bytes and the cause, and processing goes on.
 */
public final class DeadLetterOnProcessingError implements ProcessingExceptionHandler {
  private static final Logger log = LoggerFactory.getLogger(DeadLetterOnProcessingError.class);
  private DeadLetters letters;

  @Override
  public void configure(Map<String, ?> configs) {
    letters = DeadLetters.fromConfigs(configs);
  }

  @Override
  public Response handleError(
      ErrorHandlerContext context, Record<?, ?> record, Exception exception) {
    log.warn(
        "dead-lettering {}/{}/{} after {} failed: {}",
        context.topic(),
        context.partition(),
        context.offset(),
        context.processorNodeId(),
        BoundedLetters.describe(exception));
    try {
      return Response.resume(
          List.of(
              letters.of(
                  context.topic(),
                  context.partition(),
                  context.offset(),
                  context.sourceRawKey(),
                  context.sourceRawValue(),
                  exception)));
    } catch (RuntimeException e) {
      log.error("cannot build the dead letter; stopping rather than losing the record", e);
      return Response.fail();
    }
  }
}
