package io.brokerstream.streams.errors;

import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An output that cannot be written (a result, a position) is never skipped: skipping it would leave
 * state changed and the result missing. The task fails instead; under exactly-once its open
 * transaction aborts, and after the cause is fixed the order is decided again from the last commit.
 */
public final class FailOnProductionError implements ProductionExceptionHandler {
  private static final Logger log = LoggerFactory.getLogger(FailOnProductionError.class);

  @Override
  public void configure(Map<String, ?> configs) {}

  @Override
  public Response handleError(
      ErrorHandlerContext context, ProducerRecord<byte[], byte[]> record, Exception exception) {
    log.error(
        "cannot write to {} while processing {}/{}/{}; failing the task",
        record.topic(),
        context.topic(),
        context.partition(),
        context.offset(),
        exception);
    return Response.fail();
  }

  @Override
  @SuppressWarnings("rawtypes")
  public Response handleSerializationError(
      ErrorHandlerContext context,
      ProducerRecord record,
      Exception exception,
      SerializationExceptionOrigin origin) {
    log.error(
        "cannot serialize the {} of a record for {} while processing {}/{}/{}; failing the task",
        origin,
        record.topic(),
        context.topic(),
        context.partition(),
        context.offset(),
        exception);
    return Response.fail();
  }
}
