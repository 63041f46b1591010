package io.brokerstream.connect.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.stream.Stream;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.errors.DataException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Each value of the flow's records in COPY text: what Postgres reads back is the value. */
class CopyTextTest {
  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of(null, Schema.OPTIONAL_STRING_SCHEMA, "\\N"),
        Arguments.of("M000001", Schema.STRING_SCHEMA, "M000001"),
        Arguments.of(
            "tab\there\nnew\rline \\ back",
            Schema.STRING_SCHEMA,
            "tab\\there\\nnew\\rline \\\\ back"),
        Arguments.of(
            "\\N", Schema.STRING_SCHEMA, "\\\\N"), // a text that looks like null stays text
        Arguments.of("fullwidth Ａ and é", Schema.STRING_SCHEMA, "fullwidth Ａ and é"),
        Arguments.of(42L, Schema.INT64_SCHEMA, "42"),
        Arguments.of(-7, Schema.INT32_SCHEMA, "-7"),
        Arguments.of(true, Schema.BOOLEAN_SCHEMA, "t"),
        Arguments.of(false, Schema.BOOLEAN_SCHEMA, "f"),
        Arguments.of(new BigDecimal("123.450000"), Decimal.schema(6), "123.450000"),
        Arguments.of(new BigDecimal("-0.000001"), Decimal.schema(6), "-0.000001"),
        Arguments.of(
            new BigDecimal("1E+3").setScale(6),
            Decimal.schema(6),
            "1000.000000"), // never an exponent
        Arguments.of(new Date(1_795_647_775_536L), Timestamp.SCHEMA, "2026-11-25 23:02:55.536+00"),
        Arguments.of(new Date(0), Timestamp.SCHEMA, "1970-01-01 00:00:00.000+00"));
  }

  @ParameterizedTest
  @MethodSource("cases")
  void eachValueIsWrittenAsPostgresReadsIt(Object value, Schema schema, String expected) {
    StringBuilder out = new StringBuilder();
    CopyText.append(out, value, schema);
    assertThat(out.toString()).isEqualTo(expected);
  }

  static final Schema HELD_MARK =
      SchemaBuilder.struct()
          .name("HeldMark")
          .field("instrument_id", Schema.STRING_SCHEMA)
          .field("mark_price", Decimal.schema(6))
          .build();

  static Struct mark(String id, String price) {
    return new Struct(HELD_MARK).put("instrument_id", id).put("mark_price", new BigDecimal(price));
  }

  static Stream<Arguments> jsonCases() {
    Schema marks = SchemaBuilder.array(HELD_MARK).build();
    return Stream.of(
        Arguments.of(List.of(), marks, "[]"),
        Arguments.of(
            List.of(mark("EQ1", "101.000000"), mark("OC1", "4.123456")),
            marks,
            "[{\"instrument_id\":\"EQ1\",\"mark_price\":101.000000},"
                + "{\"instrument_id\":\"OC1\",\"mark_price\":4.123456}]"),
        // JSON escapes a quote and a backslash with a backslash, a control character as a unicode
        // escape: COPY
        // then doubles every backslash, so Postgres reads the JSON back as it was written
        Arguments.of(
            List.of(mark("a\"b\\c\td", "0.000001")),
            marks,
            "[{\"instrument_id\":\"a\\\\\"b\\\\\\\\c\\\\u0009d\",\"mark_price\":0.000001}]"),
        Arguments.of(
            List.of(new Date(0)),
            SchemaBuilder.array(Timestamp.SCHEMA).build(),
            "[\"1970-01-01 00:00:00.000+00\"]"),
        Arguments.of(
            Arrays.asList("x", null),
            SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build(),
            "[\"x\",null]"));
  }

  @ParameterizedTest
  @MethodSource("jsonCases")
  void arraysAndRecordsAreWrittenAsJsonForAJsonColumn(
      Object value, Schema schema, String expected) {
    StringBuilder out = new StringBuilder();
    CopyText.append(out, value, schema);
    assertThat(out.toString()).isEqualTo(expected);
  }

  @Test
  void aTypeNoColumnHasIsRefused() {
    assertThatThrownBy(
            () -> CopyText.append(new StringBuilder(), new byte[] {1}, Schema.BYTES_SCHEMA))
        .isInstanceOf(DataException.class)
        .hasMessageContaining("no column type");
    Schema bytes = SchemaBuilder.array(Schema.BYTES_SCHEMA).build();
    assertThatThrownBy(() -> CopyText.append(new StringBuilder(), List.of(new byte[] {1}), bytes))
        .isInstanceOf(DataException.class)
        .hasMessageContaining("no JSON form");
  }
}
