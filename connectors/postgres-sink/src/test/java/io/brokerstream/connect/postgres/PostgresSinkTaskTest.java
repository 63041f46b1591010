package io.brokerstream.connect.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Whose fault each Postgres error is: the record's own (dead-lettered) or the world's (the batch
 * waits whole); and which fail a task at its start as a configuration it cannot work with.
 */
class PostgresSinkTaskTest {
  @ParameterizedTest
  @CsvSource({
    "22003, true, false", // numeric value out of range: the record's value
    "22021, true, false", // a character not valid in the encoding (NUL)
    "23514, true, false", // a CHECK the row breaks
    "23502, true, false", // a NOT NULL column the record leaves empty
    "25006, false, false", // read-only transaction: a failover to a standby
    "40P01, false, false", // deadlock
    "40001, false, false", // serialization failure
    "53100, false, false", // disk full
    "57014, false, false", // statement timeout
    "55P03, false, false", // lock not available
    "08006, false, false", // connection failure
    "57P01, false, false", // the server shut down
    "XX000, false, false", // an internal error: not the record's to answer for
    "42P01, false, true", // no such table: at start a configuration, later DDL in progress
    "42703, false, true", // no such column: likewise
    "28P01, false, true", // password authentication failed
    "3D000, false, true" // no such database
  })
  void eachSqlStateIsTheRecordsOwnOrAFaultOfTheWorld(
      String state, boolean recordsOwn, boolean misconfigured) {
    SQLException e = new SQLException("x", state);
    assertThat(SqlFaults.recordsOwn(e)).isEqualTo(recordsOwn);
    assertThat(SqlFaults.misconfigured(e)).isEqualTo(misconfigured);
  }

  @org.junit.jupiter.api.Test
  void anErrorWithoutAStateIsAFault() {
    SQLException e = new SQLException("I/O error");
    assertThat(SqlFaults.recordsOwn(e)).isFalse();
    assertThat(SqlFaults.describe(e)).startsWith("none: ");
    assertThat(SqlFaults.describe(new SQLException("ro", "25006")))
        .isEqualTo("25006 read_only_sql_transaction: ro");
  }
}
