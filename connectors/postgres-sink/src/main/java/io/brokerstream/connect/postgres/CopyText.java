package io.brokerstream.connect.postgres;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.errors.DataException;

/**
 * One field of a Connect record in PostgreSQL's COPY text format: {@code \N} for null, backslash
 * escapes for the characters that end a field or a row. Decimals are written exactly, timestamps in
 * UTC with milliseconds; a type a column of the flow's tables never has is refused (the record is
 * dead-lettered).
 */
final class CopyText {
  static final String NULL = "\\N";
  private static final DateTimeFormatter TIMESTAMP =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS'+00'").withZone(ZoneOffset.UTC);

  private CopyText() {}

  static void append(StringBuilder out, Object value, Schema schema) {
    if (value == null) {
      out.append(NULL);
      return;
    }
    String logical = schema == null ? null : schema.name();
    if (Decimal.LOGICAL_NAME.equals(logical) || value instanceof BigDecimal) {
      out.append(((BigDecimal) value).toPlainString());
      return;
    }
    if (Timestamp.LOGICAL_NAME.equals(logical) || value instanceof Date) {
      out.append(TIMESTAMP.format(((Date) value).toInstant()));
      return;
    }
    if (org.apache.kafka.connect.data.Date.LOGICAL_NAME.equals(logical)) {
      out.append(LocalDate.ofInstant(((Date) value).toInstant(), ZoneOffset.UTC));
      return;
    }
    if (value instanceof CharSequence s) {
      escape(out, s);
    } else if (value instanceof Boolean b) {
      out.append(b ? 't' : 'f');
    } else if (value instanceof Number || value instanceof Instant) {
      out.append(value);
    } else {
      throw new DataException(
          "a "
              + value.getClass().getSimpleName()
              + " (schema "
              + (schema == null ? "none" : schema.type())
              + ") has no column type in the flow's tables");
    }
  }

  static void escape(StringBuilder out, CharSequence s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '\\' -> out.append("\\\\");
        case '\t' -> out.append("\\t");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        default -> out.append(c);
      }
    }
  }
}
