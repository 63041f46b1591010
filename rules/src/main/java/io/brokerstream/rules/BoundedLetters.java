package io.brokerstream.rules;

import io.brokerstream.avro.DeadLetter;
import java.nio.ByteBuffer;
import java.time.Instant;

/**
 * Dead letters that always fit their topic, however large the record they tell of: a letter keeps
 * the key's first {@link #MAX_KEY_BYTES} and the value's first {@link #MAX_VALUE_BYTES} bytes (its
 * message says when either was cut; the whole record stays at its source position for as long as
 * its topic keeps it) and at most {@link #MAX_MESSAGE_CHARS} of message. Both architectures write
 * theirs through here.
 */
public final class BoundedLetters {
  public static final int MAX_KEY_BYTES = 1024;
  public static final int MAX_VALUE_BYTES = 65_536;
  public static final int MAX_MESSAGE_CHARS = 2048;

  private BoundedLetters() {}

  public static DeadLetter letter(
      String topic,
      int partition,
      long offset,
      byte[] key,
      byte[] value,
      String errorClass,
      String message,
      String application,
      Instant at) {
    StringBuilder text = new StringBuilder(clip(message == null ? "" : message, MAX_MESSAGE_CHARS));
    if (key != null && key.length > MAX_KEY_BYTES) {
      text.append(" [key of ")
          .append(key.length)
          .append(" bytes, its first ")
          .append(MAX_KEY_BYTES)
          .append(" kept]");
    }
    if (value != null && value.length > MAX_VALUE_BYTES) {
      text.append(" [value of ")
          .append(value.length)
          .append(" bytes, its first ")
          .append(MAX_VALUE_BYTES)
          .append(" kept]");
    }
    return DeadLetter.newBuilder()
        .setSourceTopic(clip(topic, 255))
        .setSourcePartition(partition)
        .setSourceOffset(offset)
        .setRecordKey(
            key == null ? null : ByteBuffer.wrap(key, 0, Math.min(key.length, MAX_KEY_BYTES)))
        .setRecordValue(
            value == null
                ? null
                : ByteBuffer.wrap(value, 0, Math.min(value.length, MAX_VALUE_BYTES)))
        .setErrorClass(clip(errorClass, 255))
        .setMessage(text.toString())
        .setApplication(application)
        .setTs(at)
        .build();
  }

  /** The key a letter is written under: where its record sat, cut to a size any topic takes. */
  public static String letterKey(String topic, int partition, long offset) {
    return clip(topic, 255) + "/" + partition + "/" + offset;
  }

  /** A cause and its causes in words, at most {@link #MAX_MESSAGE_CHARS}. */
  public static String describe(Throwable cause) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = cause;
        t != null && text.length() < MAX_MESSAGE_CHARS;
        t = t.getCause() == t ? null : t.getCause()) {
      if (text.length() > 0) {
        text.append(" <- caused by ");
      }
      text.append(t.getClass().getSimpleName())
          .append(": ")
          .append(clip(String.valueOf(t.getMessage()), MAX_MESSAGE_CHARS));
    }
    return clip(text.toString(), MAX_MESSAGE_CHARS);
  }

  /** At most {@code max} characters of {@code text}, marked when cut. */
  public static String clip(String text, int max) {
    if (text == null || text.length() <= max) {
      return text;
    }
    return text.substring(0, max) + "...(" + (text.length() - max) + " more characters)";
  }
}
