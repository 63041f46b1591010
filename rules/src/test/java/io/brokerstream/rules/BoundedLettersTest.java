package io.brokerstream.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.DeadLetter;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class BoundedLettersTest {
  @Test
  void aLetterKeepsSmallRecordsWholeAndSaysWhatItCutFromLargeOnes() {
    byte[] small = "value".getBytes();
    DeadLetter whole =
        BoundedLetters.letter(
            "orders", 1, 7, "M1".getBytes(), small, "E", "why", "app", Instant.EPOCH);
    assertThat(whole.getRecordValue().remaining()).isEqualTo(5);
    assertThat(whole.getMessage()).isEqualTo("why");

    byte[] key = new byte[BoundedLetters.MAX_KEY_BYTES + 1];
    byte[] value = new byte[1_000_000];
    DeadLetter cut =
        BoundedLetters.letter(
            "orders", 1, 7, key, value, "E", "x".repeat(10_000), "app", Instant.EPOCH);
    assertThat(cut.getRecordKey().remaining()).isEqualTo(BoundedLetters.MAX_KEY_BYTES);
    assertThat(cut.getRecordValue().remaining()).isEqualTo(BoundedLetters.MAX_VALUE_BYTES);
    assertThat(cut.getMessage())
        .contains("[key of 1025 bytes, its first 1024 kept]")
        .contains("[value of 1000000 bytes, its first 65536 kept]")
        .contains("more characters")
        .hasSizeLessThan(BoundedLetters.MAX_MESSAGE_CHARS + 200);
  }

  @Test
  void aCauseChainIsDescribedWithinTheBound() {
    Exception cause = new IllegalStateException("y".repeat(5000), new RuntimeException("inner"));
    assertThat(BoundedLetters.describe(cause))
        .startsWith("IllegalStateException: yyy")
        .hasSizeLessThan(BoundedLetters.MAX_MESSAGE_CHARS + 50);
    assertThat(BoundedLetters.describe(new RuntimeException("a", new RuntimeException("b"))))
        .isEqualTo("RuntimeException: a <- caused by RuntimeException: b");
  }
}
