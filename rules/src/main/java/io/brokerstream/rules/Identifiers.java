package io.brokerstream.rules;

/**
 * The one rule for every identifier a stranger can name: member, account, instrument and order ids
 * (1 to 64 characters) and trace ids (1 to 128), each of ASCII letters, digits and {@code . _ : -}.
 * That covers UUIDs, FIX ClOrdIDs and W3C trace ids, and it never holds the '|' that joins ids in
 * store keys, a control character, a space or a lookalike letter. The gateway applies it before
 * anything is written, the order flow to every record it reads (a record written around the
 * gateway), Postgres to reference data (sql/postgres), and the OpenAPI contract states it as a
 * pattern.
 */
public final class Identifiers {
  public static final int MAX_ID = 64;
  public static final int MAX_TRACE_ID = 128;

  /** The same rule as a regular expression, for the contract and the database. */
  public static final String PATTERN = "^[A-Za-z0-9._:-]{1,64}$";

  private Identifiers() {}

  public static boolean isId(String text) {
    return valid(text, MAX_ID);
  }

  public static boolean isTraceId(String text) {
    return valid(text, MAX_TRACE_ID);
  }

  /**
   * Why {@code text} is not an id of at most {@code max} characters, in words that never repeat
   * more than a little of it; null when it is one.
   */
  public static String problem(String text, int max) {
    if (text == null || text.isEmpty()) {
      return "must be 1 to " + max + " characters, got none";
    }
    if (text.length() > max) {
      return "must be 1 to " + max + " characters, got " + text.length();
    }
    for (int i = 0; i < text.length(); i++) {
      if (!allowed(text.charAt(i))) {
        return "may hold only ASCII letters, digits and . _ : - (character "
            + (i + 1)
            + " is not one)";
      }
    }
    return null;
  }

  private static boolean valid(String text, int max) {
    if (text == null || text.isEmpty() || text.length() > max) {
      return false;
    }
    for (int i = 0; i < text.length(); i++) {
      if (!allowed(text.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  private static boolean allowed(char c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '.'
        || c == '_'
        || c == ':'
        || c == '-';
  }
}
