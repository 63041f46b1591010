package io.brokerstream.rules;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class IdentifiersTest {
  private static final Pattern RULE = Pattern.compile(Identifiers.PATTERN);

  @ParameterizedTest(name = "''{0}'' is an id: {1}")
  @CsvSource(
      delimiter = '#',
      value = {
        "M000001 # true",
        "A-1.b_c:d # true",
        "550e8400-e29b-41d4-a716-446655440000 # true",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa # true",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa # false",
        "'' # false",
        "M|1 # false",
        "a b # false",
        "\uff21 # false",
        "caf\u00e9 # false",
        "a/b # false",
        "a\u0007b # false",
        "a%20 # false",
        "a\"b # false"
      })
  void theOneIdRule(String text, boolean id) {
    assertThat(Identifiers.isId(text)).isEqualTo(id);
    assertThat(Identifiers.problem(text, Identifiers.MAX_ID) == null).isEqualTo(id);
    // the pattern the contract and the database state says the same
    assertThat(RULE.matcher(text).matches()).isEqualTo(id);
  }

  @ParameterizedTest
  @CsvSource({"64, true", "65, false", "128, false"})
  void lengthsAtTheEdge(int length, boolean id) {
    assertThat(Identifiers.isId("x".repeat(length))).isEqualTo(id);
    assertThat(Identifiers.isTraceId("x".repeat(length))).isEqualTo(length <= 128);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '#',
      value = {
        "'' # got none",
        "M|1 # character 2",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa # got 101"
      })
  void aProblemSaysWhatIsWrongWithoutRepeatingTheText(String text, String says) {
    String problem = Identifiers.problem(text, Identifiers.MAX_ID);
    assertThat(problem).contains(says).doesNotContain("aaaa");
  }
}
