package io.brokerstream.connect.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the task does with each kind of Postgres error: fail (configuration), retry (connection), or
 * neither.
 */
class PostgresSinkTaskTest {
  @ParameterizedTest
  @CsvSource({
    "28P01, true, false", // password authentication failed
    "28000, true, false", // invalid authorization
    "3D000, true, false", // no such database
    "42P01, true, false", // no such table
    "08006, false, true", // connection failure
    "08001, false, true", // cannot connect now
    "57P01, false, true", // the server shut down
    "23505, false, false", // a unique violation: a record's problem, dead-lettered
    "22021, false, false"
  }) // a character not valid in the encoding (NUL): dead-lettered
  void eachSqlStateIsAConfigurationAConnectionOrARecordProblem(
      String state, boolean misconfigured, boolean lost) {
    SQLException e = new SQLException("x", state);
    assertThat(PostgresSinkTask.misconfigured(e)).isEqualTo(misconfigured);
    assertThat(PostgresSinkTask.lostConnection(e)).isEqualTo(lost);
  }
}
