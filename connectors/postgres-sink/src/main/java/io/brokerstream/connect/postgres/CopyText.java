package io.brokerstream.connect.postgres;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Date;
import java.util.List;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.errors.DataException;

/**
 * One field of a Connect record in PostgreSQL's COPY text format: {@code \N} for null, backslash
 * escapes for the characters that end a field or a row. Decimals are written exactly, timestamps in
 * UTC with milliseconds; an array or a record (an equity's held marks) as JSON, for a {@code json}
 * column, its decimals as JSON numbers, exactly as they are. A type a column of the flow's tables
 * never has is refused (the record is dead-lettered).
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
    if (value instanceof List<?> || value instanceof Struct) {
      StringBuilder json = new StringBuilder();
      json(json, value, schema);
      escape(out, json);
    } else if (value instanceof CharSequence s) {
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

  /** A value as JSON: arrays and records nest, decimals are numbers, timestamps strings. */
  private static void json(StringBuilder out, Object value, Schema schema) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof List<?> list) {
      Schema items = schema == null ? null : schema.valueSchema();
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        json(out, list.get(i), items);
      }
      out.append(']');
    } else if (value instanceof Struct struct) {
      out.append('{');
      boolean first = true;
      for (Field f : struct.schema().fields()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        jsonString(out, f.name());
        out.append(':');
        json(out, struct.get(f), f.schema());
      }
      out.append('}');
    } else if (value instanceof BigDecimal d) {
      out.append(d.toPlainString());
    } else if (value instanceof Boolean || value instanceof Long || value instanceof Integer) {
      out.append(value);
    } else if (value instanceof CharSequence s) {
      jsonString(out, s);
    } else if (value instanceof Date || value instanceof Instant) {
      StringBuilder text = new StringBuilder();
      append(text, value, schema);
      jsonString(out, text);
    } else {
      throw new DataException(
          "a " + value.getClass().getSimpleName() + " inside an array or record has no JSON form");
    }
  }

  private static void jsonString(StringBuilder out, CharSequence s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    out.append('"');
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
