package io.brokerstream.streams.errors;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.InMemorySchemaRegistry;
import io.brokerstream.serde.RegistryUnavailableException;
import io.brokerstream.serde.SerdeException;
import java.io.IOException;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.streams.errors.DeserializationExceptionHandler;
import org.junit.jupiter.api.Test;

/** A record is dead-lettered for what is wrong with it, never because the registry was down. */
class DeadLetterOnDeserializationErrorTest {
  private final DeadLetterOnDeserializationError handler = new DeadLetterOnDeserializationError();
  private final ConsumerRecord<byte[], byte[]> record =
      new ConsumerRecord<>("orders", 3, 42L, new byte[] {1}, new byte[] {0, 0, 0, 0, 7, 2});

  DeadLetterOnDeserializationErrorTest() {
    handler.configure(
        Map.of(
            DeadLetters.CODEC_CONFIG,
            AvroCodec.specific(DeadLetter.class, new InMemorySchemaRegistry(), true),
            DeadLetters.APPLICATION_CONFIG,
            "app"));
  }

  @Test
  void aBadRecordIsDeadLettered() {
    var response =
        handler.handleError(
            null, record, new SerializationException(new SerdeException("unknown schema id 7")));
    assertThat(response.result()).isEqualTo(DeserializationExceptionHandler.Result.RESUME);
    assertThat(response.deadLetterQueueRecords()).hasSize(1);
  }

  @Test
  void aGoodRecordTheRegistryCouldNotHelpReadFailsTheThreadInstead() {
    var cause =
        new SerializationException(
            new RegistryUnavailableException("unreachable for 120 s", new IOException()));
    var response = handler.handleError(null, record, cause);
    assertThat(response.result()).isEqualTo(DeserializationExceptionHandler.Result.FAIL);
    assertThat(response.deadLetterQueueRecords()).isEmpty();
  }
}
